import * as fs from "node:fs";
import { NO_SLOTS, type SlotSignals } from "../src/domain/lock/slot-time.js";
import { type ReadReport, readLockReports } from "../src/folder/lock-reports.js";
import type { Clock } from "../src/infra/clock.js";

/**
 * While a lock of the dispatch reports, the loop looks again this often: a lock that dies (SIGKILL, its
 * agent's stop) writes nothing, and its wait must not keep the wall standing for long after it.
 */
export const SLOT_RECHECK_MS = 1000;

/**
 * What the dispatch's `catherd lock`s report (src/folder/lock-reports.ts), read when it can have changed:
 * when the folder watch names a report, every SLOT_RECHECK_MS while a live one is there (its writer may
 * die without a word), and at every poll when the folder is not watched. Reports of dead locks are
 * removed, best effort: the folder is the supervisor's. A wait is dated by the lock's own word (its
 * report's `since`), placed on the loop's clock and never before the read that saw no wait: a read that
 * comes late does not shorten the wait it finds.
 */
export class SlotReports {
  private news = true;
  private signals: SlotSignals = NO_SLOTS;
  private readAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly dir: string,
    private readonly clock: Pick<Clock, "wallNow">,
  ) {}

  /** A report was created, rewritten or removed (the folder watch said so). */
  changed(): void {
    this.news = true;
  }

  /** Whether a lock of the dispatch waited or ran at the last read. */
  private get live(): boolean {
    return this.signals.waiting || this.signals.running;
  }

  /** When the reports must be read again without news (monotonic ms), or null. */
  dueAt(): number | null {
    return this.live ? this.readAt + SLOT_RECHECK_MS : null;
  }

  /** The locks' state at `now`; `watched` is false when the folder watch cannot tell of changes. */
  read(now: number, watched: boolean): SlotSignals {
    const due = this.news || !watched || (this.live && now >= this.readAt + SLOT_RECHECK_MS);
    if (!due) return this.signals;
    this.news = false;
    const readBefore = this.readAt;
    this.readAt = now;
    const { live, dead } = readLockReports(this.dir);
    for (const file of dead) {
      try {
        fs.rmSync(file, { force: true });
      } catch {
        // left for the next read: it is ignored all the same
      }
    }
    const waiting = live.filter((r) => r.report.state === "waiting");
    this.signals = {
      waiting: waiting.length > 0,
      running: live.some((r) => r.report.state === "running"),
      waitingSince: this.waitBegan(waiting, now, readBefore),
    };
    return this.signals;
  }

  /** When the earliest waiting lock began to wait, on the loop's clock: its `since`, between readBefore and now. */
  private waitBegan(waiting: readonly ReadReport[], now: number, readBefore: number): number | null {
    const began = Math.min(...waiting.map((r) => Date.parse(r.report.since)));
    if (!Number.isFinite(began)) return null;
    const ago = Math.max(0, this.clock.wallNow().getTime() - began);
    return Math.max(readBefore, now - ago);
  }
}
