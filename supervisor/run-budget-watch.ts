import type { Crossing, Spend } from "../src/domain/spend/budget.js";
import { type RunBudget, replacePart, runCrossing } from "../src/domain/spend/run-budget.js";
import { placeOf, runOf } from "../src/folder/layout.js";
import { readRunFile } from "../src/folder/run-file.js";
import { type LedgerSum, writeSpendPart } from "../src/folder/run-ledger.js";
import { runSpendNow } from "../src/folder/run-spend-now.js";
import type { RunPaths } from "../src/infra/paths.js";
import type { SupervisorLog } from "./log.js";

// The run's budget, as one of its supervisors watches it (specs/supervisor.md, "Spending"): while the run
// has a budget, this dispatch's spend so far goes into its part of the run's ledger (at most every
// PART_WRITE_MS, when it moved), and every RUN_LOOK_MS the run's spend — summed once for all its
// supervisors, at most SUM_EVERY_MS old (folder/run-spend-now.ts), this dispatch's own fresher figures in
// place of its part — is set against the budget. No supervisor reads another's stream, and only one sum
// of the parts is made for the whole run at a time: a look costs a read of run.json and of spend-now.json.
// From another dispatch's crossing report to this one's stop: its poll, its part, the sum, this look —
// about 2.3 s at most.

/** How often the run's budget is looked at, busy or quiet: the stop comes within seconds of the crossing. */
export const RUN_LOOK_MS = 1000;
/** This dispatch's part is rewritten at most this often, when its spend moved. */
export const PART_WRITE_MS = 500;

export class RunBudgetWatch {
  private budget: RunBudget | null = null;
  private createdAtMs = Number.NaN;
  private lookedAt = Number.NEGATIVE_INFINITY;
  private writtenAt = Number.NEGATIVE_INFINITY;
  private writtenReports = 0;
  /** The run's spend as last summed (at the last look). */
  private lastSum: LedgerSum | null = null;

  private constructor(
    private readonly run: RunPaths,
    private readonly ids: { dispatchId: string; name: string },
    private readonly log: SupervisorLog,
  ) {}

  /** The watch of a folder laid out in a run; null for one anywhere else (no run, no budget). */
  static of(dir: string, log: SupervisorLog): RunBudgetWatch | null {
    const place = placeOf(dir);
    const run = runOf(dir);
    return place === null || run === null ? null : new RunBudgetWatch(run, place, log);
  }

  /** Whether the run's dollars are watched: its own dollars must then be priced while it runs. */
  get wantsDollars(): boolean {
    return this.budget?.usd != null;
  }

  /**
   * When the loop must look again (monotonic ms) though nothing moves: the next look while the run has a
   * budget; Infinity without one (run.json is read again at the loop's next poll after RUN_LOOK_MS).
   */
  dueAt(): number {
    return this.budget === null ? Number.POSITIVE_INFINITY : this.lookedAt + RUN_LOOK_MS;
  }

  /**
   * One poll's look: run.json again once RUN_LOOK_MS has passed; with a budget, the run's spend summed at
   * each look, and this dispatch's part rewritten when its `reports` (usage reports folded so far) moved
   * and PART_WRITE_MS has passed — or at once when its spend, set against the last sum, crosses the
   * budget: the crossing is on disk, for admission and promotion to see, before this dispatch's stop can
   * free a slot or start a promoter (specs/dispatch.md, "A run's budget"). Returns the limit reached, or
   * null. `spend` gives this dispatch's spend so far (priced when `wantsDollars`). A part that cannot be
   * written is logged; the next try writes it.
   */
  async look(
    now: number,
    wall: Date,
    reports: number,
    spend: (at: Date) => Promise<Spend>,
  ): Promise<Crossing | null> {
    const looking = now - this.lookedAt >= RUN_LOOK_MS;
    if (looking) this.readBudget(now);
    if (this.budget === null) return null;
    const moved = reports !== this.writtenReports;
    if (!looking && !moved) return null;
    const own = await spend(wall);
    if (looking) this.lastSum = await runSpendNow(this.run, wall);
    const crossing = this.lastSum === null ? null : this.crossingWith(own, this.lastSum, wall);
    if (moved && (crossing !== null || now - this.writtenAt >= PART_WRITE_MS)) {
      this.writePart(now, wall, reports, own);
    }
    return crossing;
  }

  /** The run's spend with this dispatch's own figures in place of its part in `sum`, set against the budget. */
  private crossingWith(own: Spend, sum: LedgerSum, wall: Date): Crossing | null {
    if (this.budget === null) return null;
    const total = replacePart(sum.spend, sum.parts[this.ids.dispatchId] ?? null, own);
    return runCrossing(this.run.run, this.budget, total, wall.getTime() - this.createdAtMs);
  }

  private readBudget(now: number): void {
    this.lookedAt = now;
    const file = readRunFile(this.run);
    const budget = file?.budget ?? null;
    if ((budget === null) !== (this.budget === null)) this.log("run-budget", { budget });
    this.budget = budget;
    this.createdAtMs = file === null ? Number.NaN : Date.parse(file.createdAt);
  }

  private writePart(now: number, wall: Date, reports: number, own: Spend): void {
    try {
      writeSpendPart(this.run, this.ids, own, { at: wall, final: false });
      this.writtenAt = now;
      this.writtenReports = reports;
    } catch (error) {
      this.writtenAt = now;
      this.log("write-failed", {
        file: "spend",
        message: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
