import { z } from "zod";
import { isoTime, loose, ms, schemaField } from "../schema-parts.js";

// The run's spend ledger (src/folder/run-ledger.ts): spend/<dispatchId>.json, spent.json, spend-now.json.
// Each file carries `schema: 1`, keeps fields it does not know, and is validated on every read.

/**
 * spend/<dispatchId>.json: one dispatch's part of its run's spend (src/folder/run-ledger.ts). Created with
 * nothing spent when the dispatch is admitted, rewritten whole by its supervisor while the run has a
 * budget, and by the record writer with the record's figures (`final`); then folded into spent.json.
 */
export const spendFileSchema = loose({
  schema: schemaField,
  dispatchId: z.string().min(1),
  name: z.string().min(1),
  at: isoTime,
  /** Tokens billed: input (cached included) plus output (reasoning included). */
  tokens: ms,
  /** Dollars where a figure is known (the CLI's own, else catherd's price), else null. */
  costUsd: z.number().nonnegative().nullable(),
  /** The record's figures: nothing of this dispatch will spend more. */
  final: z.boolean(),
});
export type SpendFile = z.infer<typeof spendFileSchema>;

/**
 * spent.json: the recorded dispatches' spend folded out of spend/, rewritten whole under the run's
 * spend.lock. `folded` names the dispatches of the last fold, whose files may outlive it by a crash: a
 * reader skips them, the next fold removes them.
 */
export const spentFileSchema = loose({
  schema: schemaField,
  at: isoTime,
  tokens: ms,
  costUsd: z.number().nonnegative(),
  unpriced: ms,
  dispatches: ms,
  folded: z.array(z.string().min(1)),
});
export type SpentFile = z.infer<typeof spentFileSchema>;

/**
 * spend-now.json: the run's whole spend as last summed (spent.json plus every part beside it), rewritten
 * under spend.lock by whoever found it older than a second; `parts` has each live dispatch's figures, so
 * that a supervisor can put its own fresher ones in their place.
 */
export const spendNowFileSchema = loose({
  schema: schemaField,
  at: isoTime,
  tokens: ms,
  costUsd: z.number().nonnegative(),
  unpriced: ms,
  live: ms,
  dispatches: ms,
  parts: z.record(z.string(), z.object({ tokens: ms, costUsd: z.number().nonnegative().nullable() })),
  /** Files of the ledger that could not be read when it was summed: their parts are missing. */
  problems: z.array(z.string()),
});
export type SpendNowFile = z.infer<typeof spendNowFileSchema>;
