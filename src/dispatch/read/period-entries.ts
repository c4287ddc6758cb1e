import * as fs from "node:fs";
import * as path from "node:path";
import { isValidId } from "../../domain/ids.js";
import { idPrefixAt } from "../../domain/quota/period.js";
import type { PeriodEntry } from "../../domain/quota/period-budget.js";
import type { RecordFile } from "../../domain/schemas.js";
import { FILES } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { okValue } from "../../infra/json-file.js";
import { LATEST_FILE, runPaths } from "../../infra/paths.js";
import { runNames } from "./locate.js";

// What the budgets by period sum (specs/quota.md, "Budgets by period"): one entry per dispatch of the
// home that started since a time — at its admission, or, for work that waited in its run's queue, at its
// promotion — a recorded one from record.json, a live one from admit.json, promoted.json, account.json and
// activity.json (what it spent so far). Folders are skipped by their id, which starts with their UTC
// creation time: one created before `createdSinceMs` is never read. Reading only; an unreadable folder
// counts nothing.

/** Which dispatches to count: those that started at or after `sinceMs`, created at or after `createdSinceMs`. */
export interface EntriesSince {
  sinceMs: number;
  createdSinceMs: number;
}

/** The entries of every dispatch of `home` that started since `since`, live ones as of `nowMs`. */
export function periodEntries(home: string, since: EntriesSince, nowMs: number): PeriodEntry[] {
  const { sinceMs } = since;
  const from = idPrefixAt(since.createdSinceMs);
  const entries: PeriodEntry[] = [];
  for (const run of runNames(home)) {
    const dispatches = runPaths(home, run).dispatches;
    for (const name of readdir(dispatches)) {
      if (!isValidId(name)) continue;
      for (const id of readdir(path.join(dispatches, name))) {
        if (id === LATEST_FILE || !isValidId(id) || id < from) continue;
        const entry = entryOf(path.join(dispatches, name, id), nowMs);
        if (entry !== null && entry.atMs >= sinceMs) entries.push(entry);
      }
    }
  }
  return entries;
}

function readdir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function entryOf(dir: string, nowMs: number): PeriodEntry | null {
  const record = okValue(readFolderJson(dir, FILES.record));
  if (record !== null) return recordEntry(record);
  const admit = okValue(readFolderJson(dir, FILES.admit));
  const activity = okValue(readFolderJson(dir, FILES.activity));
  // Queued, or started without a report yet: nothing spent.
  if (admit === null || activity === null) return null;
  const promoted = okValue(readFolderJson(dir, FILES.promoted))?.at ?? null;
  const startMs = Date.parse(promoted ?? admit.admittedAt);
  if (!Number.isFinite(startMs)) return null;
  const tokens = activity.usage ?? { input: activity.tokens.input, output: activity.tokens.output };
  return {
    backend: admit.backend,
    account: okValue(readFolderJson(dir, FILES.account))?.name ?? null,
    tags: admit.tags ?? [],
    atMs: startMs,
    usd: activity.costUsd ?? 0,
    tokens: tokens.input + tokens.output,
    minutes: Math.max(0, nowMs - startMs) / 60_000,
  };
}

function recordEntry(record: RecordFile): PeriodEntry | null {
  // Its agent's start: after its admission, or after its promotion when it waited in the queue.
  const at = Date.parse(record.startedAt ?? record.admittedAt ?? record.endedAt);
  if (!Number.isFinite(at)) return null;
  const tokens = record.usage ?? { input: record.tokens.input, output: record.tokens.output };
  return {
    backend: record.backend,
    account: record.account ?? null,
    tags: record.tags ?? [],
    atMs: at,
    usd: record.costUsd ?? 0,
    tokens: tokens.input + tokens.output,
    minutes: (record.secs ?? 0) / 60,
  };
}
