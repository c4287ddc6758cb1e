import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import { lockReportPath, writeLockReport } from "../../src/folder/lock-reports.js";
import { startTimeOf } from "../../src/infra/process-identity.js";
import { systemFiles } from "../../supervisor/deps.js";
import { SLOT_RECHECK_MS } from "../../supervisor/slot-reports.js";
import { watchAgent } from "../../supervisor/watch-loop.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { tempDir } from "../helpers/folders.js";
import { loopSpec, neverExitingChild } from "../helpers/watch.js";

// The watch loop with the reports of a dispatch's locks in its folder, on a fake clock: a waiting lock
// keeps the dispatch from idling and stops its wall; a report whose writer is dead counts for nothing.

const START = startTimeOf(process.pid);

/** A report as a lock writes it; this test process stands for the lock (alive, by pid and start time). */
function report(dir: string, state: "waiting" | "running", pid = process.pid, startTime = START) {
  const file = lockReportPath(dir, pid, startTime);
  writeLockReport(file, {
    pid,
    startTime,
    class: "heavy",
    label: "npm test",
    state,
    since: "2026-11-29T08:00:00.000Z",
    ahead: state === "waiting" ? 0 : null,
    held: 1,
    slots: 1,
    waitedMs: 0,
  });
  return file;
}

async function watchDir(dir: string, clock: FakeClock, limits: { idleMs: number; wallMs: number }) {
  const spec = loopSpec(dir, "exec", { ...limits, stallMs: limits.idleMs / 2, pollMs: 100 });
  const outcome = await watchAgent({
    dir,
    spec,
    backend: backendFor("exec"),
    child: neverExitingChild(),
    deps: { clock, files: systemFiles },
    log: () => {},
    interrupt: new AbortController().signal,
  });
  return { reason: outcome.reason, at: clock.mono, waited: outcome.state.slotWaitedMs };
}

describe("the watch loop and the dispatch's locks", () => {
  it("does not idle while a lock waits; idles idleMs after the wait is over, the wait counted", async () => {
    const dir = tempDir();
    const file = report(dir, "waiting");
    const clock = new FakeClock([{ at: 6000, happen: () => fs.rmSync(file) }]);
    const { reason, at, waited } = await watchDir(dir, clock, { idleMs: 2000, wallMs: 600_000 });
    expect(reason).toBe("idle-timeout");
    // The wait is seen over at the first look after 6 s (at most SLOT_RECHECK_MS later), then 2 s of quiet.
    expect(at).toBeGreaterThanOrEqual(8000);
    expect(at).toBeLessThanOrEqual(8000 + SLOT_RECHECK_MS);
    expect(waited).toBeGreaterThanOrEqual(6000);
    expect(waited).toBeLessThanOrEqual(6000 + SLOT_RECHECK_MS);
  });

  it("stops the wall while a lock waits, and keeps it running while a command runs", async () => {
    const dir = tempDir();
    report(dir, "waiting");
    // The same lock, its slot taken after 5 s: its report now says it runs.
    const clock = new FakeClock([{ at: 5000, happen: () => report(dir, "running") }]);
    const { reason, at, waited } = await watchDir(dir, clock, { idleMs: 600_000, wallMs: 3000 });
    expect(reason).toBe("wall-timeout");
    expect(at).toBe(3000 + waited);
    expect(waited).toBeGreaterThanOrEqual(5000);
    expect(waited).toBeLessThanOrEqual(5000 + SLOT_RECHECK_MS);
  });

  it("ignores, and removes, the report of a lock that died", async () => {
    const dir = tempDir();
    const dead = report(dir, "waiting", 999_999, "12345");
    const { reason, at, waited } = await watchDir(dir, new FakeClock(), { idleMs: 2000, wallMs: 600_000 });
    expect({ reason, at, waited }).toEqual({ reason: "idle-timeout", at: 2000, waited: 0 });
    expect(fs.existsSync(dead)).toBe(false);
    expect(path.basename(dead)).toBe("lock-999999-12345.json");
  });
});
