import { SCHEMA_VERSION, type SpendNowFile, spendNowFileSchema } from "../domain/schemas.js";
import { writeJsonAtomic } from "../infra/atomic.js";
import { readJsonFile } from "../infra/json-file.js";
import type { RunPaths } from "../infra/paths.js";
import { foldUnderLock, type LedgerSum, sumLedger, withSpendLock } from "./run-ledger.js";

// The run's whole spend, summed once for everyone (specs/dispatch.md, "A run's budget"). Every supervisor
// of a run with a budget looks at the run's spend once a second; were each to sum the ledger, a run of N
// live dispatches would cost N sums of N parts a second. Instead the sum is kept in spend-now.json: whoever
// finds it older than SUM_EVERY_MS folds and sums the ledger under spend.lock (taken without waiting: the
// others read the sum as it is) and writes it. A look then costs one small read, and the run two sums a
// second at most, however many dispatches look.

/** spend-now.json older than this is summed again by whoever looks next (twice a second for the run). */
export const SUM_EVERY_MS = 500;
/** When the lock is busy, a sum this recent is good enough; an older one is summed again without it. */
const STALE_SUM_MS = 5000;
/**
 * A sum dated this far in the future was written on a host whose clock is ahead (a folder shared between
 * machines): it is not taken as fresh.
 */
const CLOCK_SKEW_MS = 1000;

/**
 * The run's spend as of at most SUM_EVERY_MS ago: spend-now.json when it is that fresh; else folded and
 * summed again under spend.lock and written back; else — the lock busy — the last sum if a few seconds
 * old, or a sum without the lock (which may miss a part a fold is moving, never count one twice).
 */
export async function runSpendNow(run: RunPaths, now: Date, everyMs = SUM_EVERY_MS): Promise<LedgerSum> {
  const last = readSum(run);
  const age = last === null ? Number.POSITIVE_INFINITY : now.getTime() - Date.parse(last.at);
  if (age >= -CLOCK_SKEW_MS && age < everyMs && last !== null) return sumOf(last);
  const summed = await withSpendLock(run, () => {
    const sum = foldUnderLock(run, now);
    writeSum(run, sum, now);
    return sum;
  });
  if (summed !== null) return summed;
  if (last !== null && age >= -CLOCK_SKEW_MS && age < STALE_SUM_MS) return sumOf(last);
  return sumLedger(run);
}

function readSum(run: RunPaths): SpendNowFile | null {
  const read = readJsonFile(run.spendNow, spendNowFileSchema);
  return read.kind === "ok" ? read.value : null;
}

function sumOf(file: SpendNowFile): LedgerSum {
  const { tokens, costUsd, unpriced, live, dispatches } = file;
  return {
    spend: { tokens, costUsd, unpriced, live, dispatches },
    parts: file.parts,
    problems: file.problems,
  };
}

/** Best effort: a sum that cannot be written is summed again by the next look. */
function writeSum(run: RunPaths, sum: LedgerSum, now: Date): void {
  const body: SpendNowFile = {
    schema: SCHEMA_VERSION,
    at: now.toISOString(),
    ...sum.spend,
    costUsd: Math.round(sum.spend.costUsd * 1e6) / 1e6,
    parts: sum.parts,
    problems: sum.problems,
  };
  try {
    // Not fsynced: it is summed again from the ledger whenever it is older than SUM_EVERY_MS.
    writeJsonAtomic(run.spendNow, body, { sync: false });
  } catch {
    // see above
  }
}
