import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { hostIdentity, readHostIdentity } from "../../src/infra/host-identity.js";
import { sightOfLock } from "../../src/infra/lock-sight.js";
import { tempDir } from "../helpers/folders.js";

describe.skipIf(process.platform !== "linux")("this process's host", () => {
  it("is its name, its boot and its PID namespace", () => {
    const host = hostIdentity();
    expect(host.name).toBe(os.hostname());
    expect(host.bootId).toBe(fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
    expect(host.pidNamespace).toBe(String(fs.statSync("/proc/self/ns/pid").ino));
    expect(hostIdentity()).toBe(host);
  });

  it("has null for what it cannot read", () => {
    expect(readHostIdentity(tempDir())).toEqual({ name: os.hostname(), bootId: null, pidNamespace: null });
  });
});

describe("the sight of a lock from any host", () => {
  it("is its age since its last refresh, or missing", () => {
    const lock = path.join(tempDir(), "supervisor.lock");
    expect(sightOfLock(lock, Date.now())).toEqual({ kind: "missing" });
    fs.mkdirSync(lock);
    const refreshed = Date.now() - 12_000;
    fs.utimesSync(lock, refreshed / 1000, refreshed / 1000);
    const sight = sightOfLock(lock, refreshed + 12_000);
    expect(sight.kind === "held" && Math.round(sight.ageMs)).toBe(12_000);
  });
});
