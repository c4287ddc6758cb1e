import type { ActivityFile, RecordFile, UsageField } from "../../domain/schemas.js";
import type { EntryModel, UsageEntry } from "../../domain/spend/usage-totals.js";
import { FILES } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { okValue } from "../../infra/json-file.js";
import { type RunPaths, runPaths } from "../../infra/paths.js";
import { listDispatchDirs, runNames } from "./locate.js";

// What `catherd usage` sums (specs/cli.md, `usage`): one entry per dispatch of the runs asked for — a
// recorded one from record.json, a live one from activity.json (its usage so far) and admit.json. Reading
// only, never through the reader gate: a dead dispatch counts what it spent until someone records it. A
// folder whose files cannot be read is left out and counted.

/** The entries of every run of `home` (or of `only`), and how many folders could not be read. */
export function usageEntries(
  home: string,
  only: string | null,
): { entries: UsageEntry[]; unreadable: number } {
  const entries: UsageEntry[] = [];
  let unreadable = 0;
  for (const name of only === null ? runNames(home) : [only]) {
    const run = runPaths(home, name);
    for (const dir of listDispatchDirs(run)) {
      const entry = entryOf(run, dir);
      if (entry === null) unreadable += 1;
      else if (entry !== "empty") entries.push(entry);
    }
  }
  return { entries, unreadable };
}

function entryOf(run: RunPaths, dir: string): UsageEntry | "empty" | null {
  const record = readFolderJson(dir, FILES.record);
  if (record.kind === "ok") return recordEntry(run, record.value);
  const admit = readFolderJson(dir, FILES.admit);
  if (admit.kind !== "ok") return record.kind === "missing" && admit.kind === "missing" ? "empty" : null;
  const activity = readFolderJson(dir, FILES.activity);
  // Queued, or started without a usage report yet: nothing spent.
  if (activity.kind === "missing") return "empty";
  if (activity.kind !== "ok") return null;
  return {
    run: run.run,
    name: admit.value.name,
    backend: admit.value.backend,
    account: okValue(readFolderJson(dir, FILES.account))?.name ?? null,
    at: admit.value.admittedAt,
    live: true,
    models: modelsOf(activity.value, admit.value.model),
  };
}

function recordEntry(run: RunPaths, record: RecordFile): UsageEntry {
  return {
    run: run.run,
    name: record.name,
    backend: record.backend,
    account: record.account ?? null,
    at: record.admittedAt ?? record.startedAt ?? record.endedAt,
    live: false,
    models: modelsOf(record, record.model),
  };
}

/**
 * A record's or activity.json's usage by model; one written before usage was recorded gives its `tokens`
 * and its dollars as one model's (the dispatch's).
 */
function modelsOf(
  figures: Pick<ActivityFile, "tokens" | "usage" | "costUsd" | "costSource">,
  model: string | null,
): EntryModel[] {
  const usage: UsageField | undefined = figures.usage;
  if (usage !== undefined && usage.models.length > 0) {
    return usage.models.map((m) => ({
      model: m.model ?? model,
      input: m.input,
      cachedInput: m.cachedInput,
      cacheWrite: m.cacheWrite,
      output: m.output,
      reasoning: m.reasoning,
      costUsd: m.costUsd,
      priced: m.costSource === "priced",
    }));
  }
  const t = usage ?? {
    input: figures.tokens.input,
    cachedInput: figures.tokens.cached,
    cacheWrite: 0,
    output: figures.tokens.output,
    reasoning: 0,
  };
  return [
    {
      model,
      input: t.input,
      cachedInput: t.cachedInput,
      cacheWrite: t.cacheWrite,
      output: t.output,
      reasoning: t.reasoning,
      costUsd: figures.costUsd ?? null,
      priced: figures.costSource === "priced",
    },
  ];
}
