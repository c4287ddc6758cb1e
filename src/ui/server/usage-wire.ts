import type { RowSpend } from "../../dispatch/read/rows.js";
import type { UsageWire } from "../wire.js";

// What the dashboard shows of a dispatch's spend, read defensively from whatever the files hold: today's
// `tokens` ({input, cached, output}) and `costUsd`, and the richer usage that record.json and
// activity.json may carry, and run.json's `budget`: every field is looked for by name and taken only when
// it is a finite number, so that a file of an older or newer catherd shows what it has and never breaks
// the page. This is the one module to change when those files change. A dispatch's caps are not read
// here: they are its row's, as `status` reads them (dispatch/read/rows.ts, `spendOf`).

type Loose = Record<string, unknown> | null | undefined;

function num(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

function obj(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** The first of `names` that `source` holds as a number. */
function pick(source: Loose, names: readonly string[]): number | null {
  for (const name of names) {
    const value = num(source?.[name]);
    if (value !== null) return value;
  }
  return null;
}

const INPUT = ["input", "inputTokens", "input_tokens"];
const CACHED = ["cached", "cachedInput", "cacheRead", "cached_input_tokens"];
const OUTPUT = ["output", "outputTokens", "output_tokens"];

/**
 * The usage of a dispatch from its record (final) or its activity (so far), with the caps of its row's
 * spend (`--max-tokens`, `--max-cost`). Null when neither file says anything.
 */
export function usageOf(
  record: Loose,
  activity: Loose,
  spend: Pick<RowSpend, "maxTokens" | "maxCostUsd"> | null,
): UsageWire | null {
  const source = record ?? activity;
  if (source == null) return null;
  const usage = obj(source.usage);
  const tokens = obj(source.tokens);
  const from = usage ?? tokens;
  const more: Record<string, number> = {};
  for (const [key, value] of Object.entries(usage ?? {})) {
    const n = num(value);
    if (n !== null && ![...INPUT, ...CACHED, ...OUTPUT].includes(key)) more[key] = n;
  }
  return {
    input: pick(from, INPUT) ?? pick(tokens, INPUT) ?? 0,
    cached: pick(from, CACHED) ?? pick(tokens, CACHED) ?? 0,
    output: pick(from, OUTPUT) ?? pick(tokens, OUTPUT) ?? 0,
    more,
    costUsd: pick(source, ["costUsd", "cost_usd"]) ?? pick(usage, ["costUsd"]),
    costSource: typeof source.costSource === "string" ? source.costSource : null,
    caps: {
      ...(spend?.maxTokens == null ? {} : { tokens: spend.maxTokens }),
      ...(spend?.maxCostUsd == null ? {} : { usd: spend.maxCostUsd }),
    },
  };
}

/** A run's budget from run.json (`budget: {tokens, usd, minutes}` or flat fields), by name. */
export function budgetOf(runFile: Loose): Record<string, number> {
  const budget: Record<string, number> = {};
  const source = obj(runFile?.budget) ?? obj(runFile?.runBudget);
  for (const [name, keys] of [
    ["tokens", ["tokens", "maxTokens"]],
    ["usd", ["usd", "costUsd", "maxCostUsd"]],
    ["minutes", ["minutes"]],
  ] as const) {
    const value = pick(source, keys);
    if (value !== null) budget[name] = value;
  }
  return budget;
}

/** All tokens of a usage, as a run's spend counts them (input includes cached). */
export function totalTokens(usage: UsageWire | null): number {
  return usage === null ? 0 : usage.input + usage.output;
}
