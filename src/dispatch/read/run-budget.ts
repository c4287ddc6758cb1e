import { type Caps, capsOf } from "../../domain/admission.js";
import type { Crossing } from "../../domain/budget.js";
import { type RunBudget, type RunSpend, runCrossing } from "../../domain/run-budget.js";
import type { RunFile } from "../../domain/schemas.js";
import { runSpendNow } from "../../folder/run-spend-now.js";
import type { RunPaths } from "../../infra/paths.js";

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
 * The run's budget as it stands at `nowMs`, or null when the run has none. Reads the ledger only then: its
 * sum as of at most a second ago (folder/run-spend-now.ts).
 */
export async function runBudgetView(
  run: RunPaths,
  runFile: RunFile | null,
  nowMs: number,
): Promise<RunBudgetView | null> {
  const budget = runFile?.budget ?? null;
  if (runFile === null || budget === null) return null;
  const { spend, problems } = await runSpendNow(run, new Date(nowMs));
  const created = Date.parse(runFile.createdAt);
  const elapsedMs = Number.isFinite(created) ? Math.max(0, nowMs - created) : 0;
  return { budget, spend, elapsedMs, spent: runCrossing(run.run, budget, spend, elapsedMs), problems };
}

/** The run's caps (run.json), with its budget's crossing when it is spent: what admission judges by. */
export async function runCaps(run: RunPaths, runFile: RunFile | null, nowMs: number): Promise<Caps> {
  return capsOf(runFile, (await runBudgetView(run, runFile, nowMs))?.spent ?? null);
}
