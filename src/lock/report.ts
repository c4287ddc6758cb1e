import * as fs from "node:fs";
import type { QueueView } from "../domain/lock/slots.js";
import { type LockReport, lockReportPath, writeLockReport } from "../folder/lock-reports.js";
import type { DispatchLink } from "./lock-request.js";

// A lock run by a dispatch's agent tells its dispatch what it does (specs/lock.md, "Inside a dispatch"):
// a report in the dispatch folder while it waits and while its command runs, gone when it ends. The
// supervisor reads it on its poll; `status`, `show` and `wait` print it. Advisory: a report that cannot
// be written is said once on stderr, and the lock goes on.

export class DispatchReport {
  private readonly file: string;
  private failed = false;

  constructor(
    link: DispatchLink,
    private readonly base: Pick<LockReport, "pid" | "startTime" | "pidNs" | "class" | "label">,
    private readonly wallNow: () => Date,
  ) {
    this.file = lockReportPath(link.dir, base.pid, base.startTime);
  }

  /** The lock waits for a slot, `view.ahead` live waiters before it. */
  waiting(view: QueueView, since: Date, slots: number): void {
    this.write({
      state: "waiting",
      since: since.toISOString(),
      ahead: view.ahead,
      held: view.held,
      slots,
      waitedMs: 0,
    });
  }

  /** The lock holds its slot and runs its command, after waiting `waitedMs` for it. */
  running(waitedMs: number, held: number, slots: number): void {
    this.write({
      state: "running",
      since: this.wallNow().toISOString(),
      ahead: null,
      held,
      slots,
      waitedMs,
    });
  }

  /** The lock ends: its report goes. */
  end(): void {
    try {
      fs.rmSync(this.file, { force: true });
    } catch {
      // a folder that refuses the removal: the report's writer is gone, so readers ignore it
    }
  }

  private write(part: Omit<LockReport, "pid" | "startTime" | "pidNs" | "class" | "label">): void {
    try {
      writeLockReport(this.file, { ...this.base, ...part });
    } catch (error) {
      if (this.failed) return;
      this.failed = true;
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`catherd lock: cannot report to its dispatch (${message})\n`);
    }
  }
}
