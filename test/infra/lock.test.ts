import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lockWithin, type Release, tryLock } from "../../src/infra/lock.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { tempDir } from "../helpers/folders.js";

// Waiting for a lock on the injected clock: a holder that keeps it is waited for exactly `waitMs` of
// monotonic time, whatever the wall clock does, and a lock released meanwhile is taken.

const held: Release[] = [];

afterEach(async () => {
  for (const release of held.splice(0)) await release().catch(() => {});
});

function lockOf() {
  const dir = tempDir();
  return { lockPath: path.join(dir, "admission.lock"), staleMs: 60_000 };
}

describe("lockWithin", () => {
  it("gives up with E_IO_LOCK after waitMs of monotonic time behind one holder", async () => {
    const lock = lockOf();
    const holder = await tryLock(lock);
    expect(holder).not.toBeNull();
    held.push(holder as Release);
    const clock = new FakeClock();
    await expect(lockWithin({ ...lock, waitMs: 1000, clock })).rejects.toMatchObject({
      code: "E_IO_LOCK",
      message: expect.stringContaining(lock.lockPath),
    });
    expect(clock.now()).toBeGreaterThanOrEqual(1000);
    // Back-off from 5 ms (jittered up to twice that), capped at 200 ms: never a sleep past the holder's limit.
    expect(clock.now()).toBeLessThan(1200);
    expect(Math.min(...clock.sleeps)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...clock.sleeps)).toBeLessThanOrEqual(200);
  });

  it("takes the lock once its holder lets it go", async () => {
    const lock = lockOf();
    const holder = (await tryLock(lock)) as Release;
    const clock = new FakeClock([{ at: 300, happen: () => void holder() }]);
    const release = await lockWithin({ ...lock, waitMs: 1000, clock });
    held.push(release);
    expect(clock.now()).toBeGreaterThanOrEqual(300);
    expect(clock.now()).toBeLessThan(1000);
    expect(fs.existsSync(lock.lockPath)).toBe(true);
  });
});

describe("two locks of one folder", () => {
  it("releases each, in any order, leaving neither directory behind", async () => {
    for (const innerFirst of [true, false]) {
      const dir = tempDir();
      const outer = (await tryLock({
        lockPath: path.join(dir, "admission.lock"),
        staleMs: 60_000,
      })) as Release;
      const inner = (await tryLock({ lockPath: path.join(dir, "spend.lock"), staleMs: 60_000 })) as Release;
      expect(outer).not.toBeNull();
      expect(inner).not.toBeNull();
      if (innerFirst) {
        await inner();
        await outer();
      } else {
        await outer();
        await inner();
      }
      expect(fs.readdirSync(dir)).toEqual([]);
    }
  });
});
