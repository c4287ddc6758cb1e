import * as fs from "node:fs";
import * as path from "node:path";
import {
  type RecordFile,
  recordFileSchema,
  SCHEMA_VERSION,
  type SpendFile,
  type SpentFile,
  spendFileSchema,
  spentFileSchema,
} from "../domain/schemas.js";
import { addDispatchSpend, NO_RUN_SPEND, type RunSpend } from "../domain/spend/run-budget.js";
import { billedTokens } from "../domain/spend/usage.js";
import { makeDir, writeJsonAtomic } from "../infra/atomic.js";
import { readJsonFile } from "../infra/json-file.js";
import { tryLock } from "../infra/lock.js";
import { dispatchDir, type RunPaths, spendFile } from "../infra/paths.js";
import { FILES, fileIn, placeOf, runOf } from "./layout.js";

// A run's spend ledger (specs/dispatch.md, "A run's budget"): what the run has spent, by many writers at
// once, on one machine or several sharing the folder, summed at a cost that does not grow with the run's
// history.
//
//   <run>/spend/<dispatchId>.json   one dispatch's part while it is not folded: rewritten whole by its
//                                   supervisor while the run has a budget (its spend so far), then once
//                                   by the record writer with the record's figures (`final`)
//   <run>/spent.json                the final parts folded into one sum, rewritten under <run>/spend.lock
//   <run>/spend-now.json            the whole as last summed (run-spend-now.ts)
//
// Each file has one writer at a time (the supervisor, then — after its loop has ended — the record writer;
// a fold or a sum under spend.lock) and is replaced whole (a temp file, then rename): a writer killed
// mid-write leaves the file as it was and a hidden temp file that no reader lists; no two processes, on one
// host or two, ever append to one file (appends to one file on NFS from two hosts interleave). A sum reads
// spent.json, lists spend/ and reads each part listed: its cost is the dispatches not yet folded — the live
// ones, and the few recorded since the last fold — never the run's history.

/** A temp file older than this is a writer's that died mid-write: the fold removes it. */
const STALE_TEMP_MS = 60_000;
/**
 * A part still not final this long after its dispatch's record lost its record writer between the record
 * and the part (killed, or a disk that refused the write): the fold takes the record's figures.
 */
export const REPAIR_AFTER_MS = 5 * 60_000;
/** spend.lock is stale after this long: a fold or a sum takes milliseconds. */
const SPEND_LOCK_STALE_MS = 5_000;

/** Tokens billed and dollars (null: no figure): one dispatch's part of the run's spend. */
export interface PartFigures {
  tokens: number;
  costUsd: number | null;
}

/**
 * Writes a dispatch's part as of `at`: its spend so far (its supervisor's, while it watches), or with
 * `final` the record's figures (the record writer's, once). Creates spend/ when it is missing.
 */
export function writeSpendPart(
  run: RunPaths,
  ids: { dispatchId: string; name: string },
  part: PartFigures,
  { at, final }: { at: Date; final: boolean },
): void {
  const body: SpendFile = {
    schema: SCHEMA_VERSION,
    dispatchId: ids.dispatchId,
    name: ids.name,
    at: at.toISOString(),
    tokens: part.tokens,
    costUsd: part.costUsd,
    final,
  };
  const file = spendFile(run, ids.dispatchId);
  // A live part is rewritten every second it moves and is superseded by the record's: not fsynced. The
  // final part is what a fold counts once and for all: fsynced.
  try {
    writeJsonAtomic(file, body, { sync: final });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    makeDir(run.spend);
    writeJsonAtomic(file, body, { sync: final });
  }
}

/**
 * The supervisor's last live part, with the record's figures, written just before it creates record.json:
 * a slot freed by the record comes with its spend already in the ledger, so that admission and promotion,
 * which count the slots before they sum the ledger, never see the slot without the spend. Only the part's
 * own writer — the supervisor, under its lock — may call it: a reader that records a dead dispatch could
 * race another and bring back a part already folded. Best effort, as every live part.
 */
export function spendBeforeRecord(dir: string, record: RecordFile, at: Date): void {
  const place = placeOf(dir);
  const run = runOf(dir);
  if (place === null || run === null) return;
  try {
    writeSpendPart(run, place, recordFigures(record), { at, final: false });
  } catch {
    // The final part after the record, or the fold's repair, puts the figures in the ledger.
  }
}

/**
 * The record writer's part, right after it created record.json: the record's figures, final, then a fold
 * (which may fold it at once). Best effort: a part left unwritten is repaired from the record by a later
 * fold (REPAIR_AFTER_MS). A folder not laid out in a run has no ledger.
 */
export async function settleSpend(dir: string, record: RecordFile, at: Date): Promise<void> {
  const place = placeOf(dir);
  const run = runOf(dir);
  if (place === null || run === null) return;
  try {
    writeSpendPart(run, place, recordFigures(record), { at, final: true });
    await withSpendLock(run, () => foldUnderLock(run, at));
  } catch {
    // See above: the fold repairs a part the record writer could not write.
  }
}

/** What a record says was spent, as a part: tokens billed and its dollars. */
function recordFigures(record: RecordFile): PartFigures {
  const tokens =
    record.usage === undefined ? record.tokens.input + record.tokens.output : billedTokens(record.usage);
  return { tokens, costUsd: record.costUsd };
}

/** A run's spend summed from its ledger, each live part's figures, and what could not be read. */
export interface LedgerSum {
  spend: RunSpend;
  /** The live (not final) parts, by dispatch id. */
  parts: Record<string, PartFigures>;
  /** Files of the ledger that could not be read (hand-broken, newer, unreadable): their parts are missing. */
  problems: string[];
}

/**
 * Runs `work` under spend.lock, taken without waiting: null when another process holds it (a fold or a sum
 * already under way).
 */
export async function withSpendLock<T>(run: RunPaths, work: () => T): Promise<T | null> {
  if (!fs.existsSync(run.spend)) return work();
  const release = await tryLock({ lockPath: run.spendLock, staleMs: SPEND_LOCK_STALE_MS });
  if (release === null) return null;
  try {
    return work();
  } finally {
    await release().catch(() => {});
  }
}

/**
 * The run's spend — spent.json plus every part beside it — without folding: what a reader that could not
 * take spend.lock sums. A fold that runs meanwhile writes spent.json before it removes the parts it folded,
 * naming them, and this reads spent.json first, then the listing, then each part: it may miss a part being
 * folded, never count one twice.
 */
export function sumLedger(run: RunPaths): LedgerSum {
  return passOver(run, null);
}

/** How many passes an exact sum makes before it says the ledger kept moving. */
const EXACT_SUM_TRIES = 20;

/**
 * The run's spend exactly as the ledger holds it now, without spend.lock: what admission and promotion
 * judge by under the run's lock (never a sum cached outside it). A pass over the ledger is consistent when
 * spent.json was not replaced during it: a fold replaces spent.json before it removes the parts it
 * folded, so a fold that finished before the pass is wholly seen through spent.json (its parts skipped by
 * name), and one that replaces it after the pass left its parts in the listing. A pass that saw spent.json
 * replaced is made again; after EXACT_SUM_TRIES the last is returned with a problem saying so.
 */
export function sumLedgerExactly(run: RunPaths): LedgerSum {
  for (let pass = 1; ; pass++) {
    const before = fileStamp(run.spentFile);
    const sum = passOver(run, null);
    if (fileStamp(run.spentFile) === before) return sum;
    if (pass === EXACT_SUM_TRIES) {
      return { ...sum, problems: [...sum.problems, `${run.spentFile} (replaced during every sum)`] };
    }
  }
}

/** Which file is at `file` now: a rename over it gives another inode and change time. */
function fileStamp(file: string): string {
  try {
    const stat = fs.statSync(file, { bigint: true });
    return `${stat.ino}:${stat.ctimeNs}:${stat.size}`;
  } catch {
    return "none";
  }
}

/**
 * Folds the final parts of spend/ into spent.json and sums the run's spend, in one pass (spend.lock held
 * by the caller). spent.json is written first, naming the dispatches it folded, then their parts are
 * removed — a fold killed in between leaves parts that a sum skips by that name and the next fold removes
 * first. A part still not final long after its dispatch's record (REPAIR_AFTER_MS) is folded from the
 * record. spent.json that cannot be read is never overwritten: nothing is folded then.
 */
export function foldUnderLock(run: RunPaths, now: Date): LedgerSum {
  return passOver(run, now);
}

/** One pass over the ledger: sums it, and with `foldAt` folds what is final (see foldUnderLock). */
function passOver(run: RunPaths, foldAt: Date | null): LedgerSum {
  const problems: string[] = [];
  const spent = readJsonFile(run.spentFile, spentFileSchema);
  if (spent.kind === "invalid") problems.push(run.spentFile);
  const before = spent.kind === "ok" ? spent.value : null;
  const folded = new Set(before?.folded ?? []);
  const fold = foldAt !== null && spent.kind !== "invalid";
  const batch: SpendFile[] = [];
  let spend = foldedSpend(before);
  const parts: Record<string, PartFigures> = {};
  for (const id of partIds(run)) {
    if (folded.has(id)) {
      // Counted in spent.json already: a fold killed before it removed it.
      if (fold) removePart(run, id);
      continue;
    }
    const part = readPart(run, id);
    if (part === "missing") continue;
    if (part === "invalid") {
      problems.push(path.join(run.spend, `${id}.json`));
      continue;
    }
    const final = part.final ? part : foldAt === null ? null : repairedFromRecord(run, part, foldAt);
    if (fold && final !== null) batch.push(final);
    const counted = final ?? part;
    spend = addDispatchSpend(spend, {
      tokens: counted.tokens,
      costUsd: counted.costUsd,
      live: !counted.final,
    });
    if (!counted.final) parts[id] = { tokens: part.tokens, costUsd: part.costUsd };
  }
  if (fold && foldAt !== null) {
    removeStaleTemps(run, foldAt);
    if (batch.length > 0) writeFolded(run, before, batch, foldAt);
  }
  return { spend, parts, problems };
}

/** spent.json with `batch` added and named, then the batch's parts removed. */
function writeFolded(run: RunPaths, before: SpentFile | null, batch: readonly SpendFile[], at: Date): void {
  let total = foldedSpend(before);
  for (const part of batch) total = addDispatchSpend(total, { ...part, live: false });
  const after: SpentFile = {
    schema: SCHEMA_VERSION,
    at: at.toISOString(),
    tokens: total.tokens,
    costUsd: Math.round(total.costUsd * 1e6) / 1e6,
    unpriced: total.unpriced,
    dispatches: total.dispatches,
    folded: batch.map((p) => p.dispatchId),
  };
  writeJsonAtomic(run.spentFile, after);
  for (const part of batch) removePart(run, part.dispatchId);
}

/** What spent.json holds, as a sum (nothing live in it). */
function foldedSpend(spent: SpentFile | null): RunSpend {
  if (spent === null) return NO_RUN_SPEND;
  const { tokens, costUsd, unpriced, dispatches } = spent;
  return { tokens, costUsd, unpriced, live: 0, dispatches };
}

/** The ids of the parts in spend/ (temp files and anything not named `<id>.json` left out). */
function partIds(run: RunPaths): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(run.spend);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith(".json") && !n.startsWith(".")).map((n) => n.slice(0, -5));
}

function readPart(run: RunPaths, id: string): SpendFile | "missing" | "invalid" {
  let file: string;
  try {
    file = spendFile(run, id);
  } catch {
    return "invalid";
  }
  const read = readJsonFile(file, spendFileSchema);
  if (read.kind !== "ok") return read.kind;
  // A part names its own dispatch: one copied under another name is not counted twice.
  return read.value.dispatchId === id ? read.value : "invalid";
}

/**
 * A part its record writer never made final: the record's figures, once both the part and the record are
 * older than REPAIR_AFTER_MS (the record writer is long gone); null while the dispatch is live or freshly
 * recorded.
 */
function repairedFromRecord(run: RunPaths, part: SpendFile, now: Date): SpendFile | null {
  if (now.getTime() - Date.parse(part.at) < REPAIR_AFTER_MS) return null;
  let dir: string;
  try {
    dir = dispatchDir(run, part.name, part.dispatchId);
  } catch {
    return null;
  }
  const record = readJsonFile(fileIn(dir, FILES.record), recordFileSchema);
  if (record.kind !== "ok" || now.getTime() - Date.parse(record.value.endedAt) < REPAIR_AFTER_MS) return null;
  return { ...part, ...recordFigures(record.value), final: true };
}

function removePart(run: RunPaths, id: string): void {
  fs.rmSync(spendFile(run, id), { force: true });
}

/** Temp files of writers that died mid-write (infra/atomic.ts names them `.<file>.<pid>.<n>.<random>.tmp`). */
function removeStaleTemps(run: RunPaths, now: Date): void {
  let names: string[];
  try {
    names = fs.readdirSync(run.spend);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(".") || !name.endsWith(".tmp")) continue;
    const file = path.join(run.spend, name);
    try {
      if (now.getTime() - fs.statSync(file).mtimeMs > STALE_TEMP_MS) fs.rmSync(file, { force: true });
    } catch {
      // gone already
    }
  }
}
