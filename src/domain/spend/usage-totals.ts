import type { BackendId } from "../vocab.js";

// Spend totals across dispatches (specs/cli.md, `usage`): each dispatch's usage as one entry, grouped by
// run, backend, model, day or name and summed. Pure: the entries are read by dispatch/read/usage-entries.ts.

/** How `catherd usage` groups its totals. */
export const USAGE_GROUPINGS = ["run", "backend", "model", "day", "name", "account"] as const;
export type UsageGrouping = (typeof USAGE_GROUPINGS)[number];

/** Token counts as the provider bills them (domain/spend/usage.ts): input includes cached input. */
export interface EntryTokens {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
}

/** One model's share of a dispatch: its tokens and dollars (null: no figure), with their source. */
export interface EntryModel extends EntryTokens {
  model: string | null;
  costUsd: number | null;
  priced: boolean;
}

/** One dispatch's spend: where it ran, when (its admission), live or recorded, and by model. */
export interface UsageEntry {
  run: string;
  name: string | null;
  backend: BackendId | null;
  /** The account it ran on (specs/quota.md), null: none known (exec, or not started yet). */
  account: string | null;
  /** ISO time of its admission (else its start): what --since and `--by day` go by. */
  at: string;
  live: boolean;
  models: EntryModel[];
}

/** A group's totals: tokens billed (input + output), the counts they are made of, dollars where known. */
export interface UsageTotal extends EntryTokens {
  /** The group's value: the run, the backend, the model ("(unknown model)" when no one named it), … */
  key: string;
  dispatches: number;
  live: number;
  tokens: number;
  costUsd: number;
  /** Dollars of catherd's price table in costUsd (an estimate), the rest the CLIs' own figures. */
  pricedUsd: number;
  /** Parts (dispatches, or a dispatch's models) that used tokens no dollar figure covers. */
  unpriced: number;
}

const UNKNOWN = {
  model: "(unknown model)",
  backend: "(unknown backend)",
  name: "(by hand)",
  account: "(no account)",
} as const;

function keysOf(entry: UsageEntry, by: UsageGrouping): (string | null)[] {
  if (by === "model") return entry.models.map((m) => m.model);
  if (by === "day") return [entry.at.slice(0, 10)];
  if (by === "run") return [entry.run];
  if (by === "backend") return [entry.backend];
  // An account is one CLI's: its key names both ("codex/work").
  if (by === "account") return [entry.account === null ? null : `${entry.backend ?? "?"}/${entry.account}`];
  return [entry.name];
}

function emptyTotal(key: string): UsageTotal {
  const zero = { input: 0, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 };
  return { key, dispatches: 0, live: 0, tokens: 0, costUsd: 0, pricedUsd: 0, unpriced: 0, ...zero };
}

function addModel(total: UsageTotal, m: EntryModel): void {
  total.input += m.input;
  total.cachedInput += m.cachedInput;
  total.cacheWrite += m.cacheWrite;
  total.output += m.output;
  total.reasoning += m.reasoning;
  total.tokens += m.input + m.output;
  if (m.costUsd !== null) {
    total.costUsd += m.costUsd;
    if (m.priced) total.pricedUsd += m.costUsd;
  } else if (m.input + m.output > 0) total.unpriced += 1;
}

/**
 * The entries at or after `sinceMs` (null: all), summed by `by`, the largest spend first (dollars, then
 * tokens, then the key), and the total of them all. By model a dispatch counts once in each of its models.
 */
export function usageTotals(
  entries: readonly UsageEntry[],
  by: UsageGrouping,
  sinceMs: number | null,
): { groups: UsageTotal[]; total: UsageTotal } {
  const groups = new Map<string, UsageTotal>();
  const total = emptyTotal("total");
  for (const entry of entries) {
    if (sinceMs !== null && !(Date.parse(entry.at) >= sinceMs)) continue;
    total.dispatches += 1;
    if (entry.live) total.live += 1;
    for (const m of entry.models) addModel(total, m);
    for (const raw of new Set(keysOf(entry, by))) {
      const key = raw ?? (by === "run" || by === "day" ? "?" : UNKNOWN[by]);
      const group = groups.get(key) ?? emptyTotal(key);
      groups.set(key, group);
      group.dispatches += 1;
      if (entry.live) group.live += 1;
      for (const m of entry.models) if (by !== "model" || m.model === raw) addModel(group, m);
    }
  }
  const rounded = [...groups.values(), total].map(roundCost);
  const sorted = rounded
    .slice(0, -1)
    .sort((a, b) => b.costUsd - a.costUsd || b.tokens - a.tokens || a.key.localeCompare(b.key));
  return {
    groups: by === "day" ? sorted.sort((a, b) => a.key.localeCompare(b.key)) : sorted,
    total: rounded.at(-1) as UsageTotal,
  };
}

/** Sums of floating dollars, to the millionth: what a reader compares. */
function roundCost(t: UsageTotal): UsageTotal {
  const r = (usd: number) => Math.round(usd * 1e6) / 1e6;
  return { ...t, costUsd: r(t.costUsd), pricedUsd: r(t.pricedUsd) };
}
