import { type Caps, capsOf } from "../../domain/admission/admission-rules.js";
import type { RunFile } from "../../domain/schemas.js";
import type { Crossing } from "../../domain/spend/budget.js";
import { type RunBudget, type RunSpend, runCrossing } from "../../domain/spend/run-budget.js";
import { sumLedgerExactly } from "../../folder/run-ledger.js";
import { runSpendNow } from "../../folder/run-spend-now.js";
import type { RunPaths } from "../../infra/paths.js";
import { readWindowBook } from "../../quota/account-state.js";
import { spentBudgets } from "./period-standings.js";

// A run's budget against its spend (specs/dispatch.md, "A run's budget"): run.json's budget, the ledger's
// sum, and whether it is spent. Reading only: admission and promotion judge by it under the run's lock,
// `status` shows it.

/** A run's budget, what it has spent, and the limit reached (null: none yet). */
export interface RunBudgetView {
  budget: RunBudget;
  spend: RunSpend;
  /** Since the run's first admission (run.json `createdAt`). */
  elapsedMs: number;
  spent: Crossing | null;
  /** Files of the ledger that could not be read: the spend may be more than it says. */
  problems: string[];
}

/**
 * How the run's spend is summed: `exact` reads the ledger as it is on disk now (admission and promotion,
 * under the run's lock: a budget spent a moment ago must already refuse); `recent` takes the sum shared
 * by the run's supervisors, at most a second old (folder/run-spend-now.ts: `status`).
 */
export type SpendSum = "exact" | "recent";

/** The run's budget as it stands at `nowMs`, or null when the run has none (its ledger read only then). */
export async function runBudgetView(
  run: RunPaths,
  runFile: RunFile | null,
  nowMs: number,
  sum: SpendSum = "recent",
): Promise<RunBudgetView | null> {
  const budget = runFile?.budget ?? null;
  if (runFile === null || budget === null) return null;
  const { spend, problems } =
    sum === "exact" ? sumLedgerExactly(run) : await runSpendNow(run, new Date(nowMs));
  const created = Date.parse(runFile.createdAt);
  const elapsedMs = Number.isFinite(created) ? Math.max(0, nowMs - created) : 0;
  return { budget, spend, elapsedMs, spent: runCrossing(run.run, budget, spend, elapsedMs), problems };
}

/**
 * The run's caps as the decisions under its lock take them: run.json's caps, and `spentNow` — the crossing
 * of its budget summed from the ledger exactly as it is on disk at each call. A decision asks for it after
 * it counted the slots it weighs, never before: a dispatch puts its spend in the ledger before its record
 * frees its slot (specs/dispatch.md, "A run's budget"), so a slot seen free comes with its spend.
 */
export interface RunCapsUnderLock {
  /**
   * run.json's caps, `spent` left null: what the slots are counted by; with the windows of the home's
   * accounts as they are now, and its budgets by period spent (specs/quota.md).
   */
  caps: Caps;
  spentNow(): Promise<Crossing | null>;
}

export function runCapsUnderLock(
  run: RunPaths,
  runFile: RunFile | null,
  nowMs: () => number,
): RunCapsUnderLock {
  return {
    caps: { ...capsOf(runFile), windows: readWindowBook(run.home), periods: spentBudgets(run.home, nowMs()) },
    spentNow: async () => (await runBudgetView(run, runFile, nowMs(), "exact"))?.spent ?? null,
  };
}
