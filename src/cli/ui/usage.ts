import type { UsageWire } from "../../web/wire.js";

// What the dashboard shows of a dispatch's spend, read defensively from whatever the files hold: today's
// `tokens` ({input, cached, output}) and `costUsd`, and the richer usage and caps that record.json,
// activity.json, spec.json and run.json may carry (`usage`, `costSource`, `maxTokens`, `maxCostUsd`,
// `budget`…): every field is looked for by name and taken only when it is a finite number, so that a
// file of an older or newer catherd shows what it has and never breaks the page. This is the one module
// to change when those files change.

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
 * The usage of a dispatch from its record (final) or its activity (so far), with the caps its spec or
 * admission names. Null when neither says anything.
 */
export function usageOf(record: Loose, activity: Loose, spec: Loose, admit: Loose): UsageWire | null {
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
    caps: capsOf(spec, admit),
  };
}

/** `--max-tokens` and `--max-cost`, wherever the files keep them. */
function capsOf(spec: Loose, admit: Loose): Record<string, number> {
  const caps: Record<string, number> = {};
  const nested = [obj(spec?.caps), obj(admit?.caps)];
  for (const source of [...nested, spec, admit]) {
    const inCaps = nested.includes(source ?? null) && source !== null;
    const tokens = pick(source, inCaps ? ["tokens", "maxTokens"] : ["maxTokens"]);
    const usd = pick(source, inCaps ? ["usd", "maxCostUsd"] : ["maxCostUsd", "maxCost"]);
    if (tokens !== null && caps.tokens === undefined) caps.tokens = tokens;
    if (usd !== null && caps.usd === undefined) caps.usd = usd;
  }
  return caps;
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
