import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { cgroupName } from "../../src/infra/cgroup/dispatch-cgroup.js";
import { sha256Hex } from "../../src/infra/sha256.js";

const nodeDigest = (text: string): string => createHash("sha256").update(text).digest("hex");

describe("sha256Hex", () => {
  it.each([
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    [
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ],
  ])("gives FIPS 180-4's digest of %j", (text, digest) => {
    expect(sha256Hex(text)).toBe(digest);
  });

  it("agrees with node:crypto at every length across the padding's block edges, and on non-ASCII text", () => {
    for (let n = 0; n <= 200; n++) {
      const text = "x".repeat(n);
      expect(sha256Hex(text), `length ${n}`).toBe(nodeDigest(text));
    }
    for (const text of [
      "/home/ülrich/runs/ø/dispatches/a",
      "日本語のフォルダ/20261202T220535Z-n2jnpo",
      "😀".repeat(40),
    ]) {
      expect(sha256Hex(text)).toBe(nodeDigest(text));
    }
  });

  it("keeps a dispatch's cgroup name what node:crypto made it, so a supervisor of an older catherd's dispatch finds it", () => {
    const dir = "/tmp/catherd/runs/default/dispatches/build/20261202T220535Z-n2jnpo";
    expect(cgroupName("20261202T220535Z-n2jnpo", dir)).toBe(
      `20261202T220535Z-n2jnpo-${nodeDigest(dir).slice(0, 10)}`,
    );
  });
});
