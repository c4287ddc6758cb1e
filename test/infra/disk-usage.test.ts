import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { bytesUnder, removeMeasured } from "../../src/infra/disk-usage.js";
import { tempDir } from "../helpers/folders.js";

function scratch(): string {
  const dir = tempDir("catherd-du-");
  return dir;
}

describe("bytesUnder and removeMeasured", () => {
  it("adds up files in nested folders, counts a hard-linked file once and never follows a symlink out", () => {
    const outside = scratch();
    fs.writeFileSync(path.join(outside, "big"), Buffer.alloc(10_000));
    const dir = scratch();
    fs.mkdirSync(path.join(dir, "a/b"), { recursive: true });
    fs.writeFileSync(path.join(dir, "one"), Buffer.alloc(100));
    fs.writeFileSync(path.join(dir, "a/b/two"), Buffer.alloc(250));
    fs.linkSync(path.join(dir, "one"), path.join(dir, "a/one-again"));
    fs.symlinkSync(outside, path.join(dir, "out"));
    const linkBytes = fs.lstatSync(path.join(dir, "out")).size;
    expect(bytesUnder(dir)).toBe(100 + 250 + linkBytes);
    expect(bytesUnder(path.join(dir, "a/b/two"))).toBe(250);
    expect(bytesUnder(path.join(dir, "missing"))).toBe(0);

    expect(removeMeasured(dir)).toBe(100 + 250 + linkBytes);
    expect(fs.existsSync(dir)).toBe(false);
    expect(fs.statSync(path.join(outside, "big")).size).toBe(10_000);
    expect(removeMeasured(dir)).toBe(0);
  });
});
