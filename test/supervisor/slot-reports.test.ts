import { describe, expect, it } from "vitest";
import { lockReportPath, writeLockReport } from "../../src/folder/lock-reports.js";
import { readProcStat } from "../../src/infra/proc-stat.js";
import { SlotReports } from "../../supervisor/slot-reports.js";
import { tempDir } from "../helpers/folders.js";

// When a dispatch's lock began to wait, as the supervisor places it on its loop's clock: by the lock's own
// report, so that a read that comes late does not shorten the wait; never before the read that saw none.

/** A wall clock at `wallMs`, movable. */
function wallAt(wallMs: number) {
  const clock = { wall: wallMs, wallNow: () => new Date(clock.wall) };
  return clock;
}

function reportWaiting(dir: string, sinceWallMs: number): void {
  const startTime = readProcStat(process.pid)?.startTime ?? null;
  writeLockReport(lockReportPath(dir, process.pid, startTime), {
    pid: process.pid,
    startTime,
    class: "heavy",
    state: "waiting",
    label: "npm test",
    since: new Date(sinceWallMs).toISOString(),
    ahead: 0,
    held: 1,
    slots: 1,
    waitedMs: 0,
  });
}

describe("SlotReports", () => {
  it("dates a wait found late by its report's since, on the loop's clock", () => {
    const dir = tempDir();
    const clock = wallAt(1_000_000);
    const slots = new SlotReports(dir, clock);
    expect(slots.read(100, true).waiting).toBe(false);
    reportWaiting(dir, 1_000_000 + 300);
    clock.wall = 1_000_000 + 2_900;
    slots.changed();
    // Read at loop time 3000, the wall 2.6 s after the lock's since: it began at loop time 400.
    expect(slots.read(3000, true)).toMatchObject({ waiting: true, waitingSince: 400 });
  });

  it("never dates a wait before the read that saw none, whatever a clock says", () => {
    const dir = tempDir();
    const clock = wallAt(5_000_000);
    const slots = new SlotReports(dir, clock);
    expect(slots.read(2000, true).waiting).toBe(false);
    reportWaiting(dir, 5_000_000 - 60_000);
    slots.changed();
    expect(slots.read(2500, true)).toMatchObject({ waiting: true, waitingSince: 2000 });
  });
});
