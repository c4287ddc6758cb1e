import * as fs from "node:fs";
import { NO_SLOTS, type SlotSignals } from "../src/domain/lock/slot-time.js";
import { readLockReports } from "../src/folder/lock-reports.js";

/**
 * While a lock of the dispatch reports, the loop looks again this often: a lock that dies (SIGKILL, its
 * agent's stop) writes nothing, and its wait must not keep the wall standing for long after it.
 */
export const SLOT_RECHECK_MS = 1000;

/**
 * What the dispatch's `catherd lock`s report (src/folder/lock-reports.ts), read when it can have changed:
 * when the folder watch names a report, every SLOT_RECHECK_MS while a live one is there (its writer may
 * die without a word), and at every poll when the folder is not watched. Reports of dead locks are
 * removed, best effort: the folder is the supervisor's.
 */
export class SlotReports {
  private news = true;
  private signals: SlotSignals = NO_SLOTS;
  private readAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly dir: string) {}

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
    this.readAt = now;
    const { live, dead } = readLockReports(this.dir);
    for (const file of dead) {
      try {
        fs.rmSync(file, { force: true });
      } catch {
        // left for the next read: it is ignored all the same
      }
    }
    this.signals = {
      waiting: live.some((r) => r.report.state === "waiting"),
      running: live.some((r) => r.report.state === "running"),
    };
    return this.signals;
  }
}
