import { type Crossing, formatUsd, groupDigits, parseCostCap, parseTokenCap } from "./budget.js";

// A run's budget (specs/dispatch.md, "A run's budget"): `--run-budget tokens=2M,usd=25,minutes=600`, how
// it is written and read back, and when the run's spend has crossed it. Pure: the run's spend is summed
// from its ledger (src/folder/run-ledger.ts) by whoever asks — admission and promotion under the run's
// lock, each supervisor at its slow look.

/** The three limits a run's budget may set, in the order they are written. */
export const RUN_BUDGET_KEYS = ["tokens", "usd", "minutes"] as const;
export type RunBudgetKey = (typeof RUN_BUDGET_KEYS)[number];

/** A run's budget as run.json remembers it; a limit not given is null. At least one is set. */
export interface RunBudget {
  /** Tokens billed by every dispatch of the run, counted as --max-tokens counts them. */
  tokens: number | null;
  /** US dollars at list prices, where a figure is known (the CLI's own, else catherd's price). */
  usd: number | null;
  /** Wall minutes since the run's first admission (run.json `createdAt`). */
  minutes: number | null;
}

/** The longest minutes budget accepted: a year. */
export const MAX_BUDGET_MINUTES = 525_600;

/**
 * `--run-budget`: `none`, or comma-separated `key=value` pairs of tokens (as --max-tokens takes them), usd
 * (as --max-cost) and minutes (a whole number from 1 to a year), each at most once. Returns the budget,
 * `none`, or the rule the text breaks, naming the part that breaks it.
 */
export function parseRunBudget(text: string): RunBudget | "none" | { rule: string } {
  const trimmed = text.trim();
  if (trimmed === "none") return "none";
  const form = "tokens=<n>, usd=<dollars> and minutes=<n>, comma separated, each at most once, or none";
  if (trimmed === "") return { rule: `empty: give ${form}` };
  const budget: RunBudget = { tokens: null, usd: null, minutes: null };
  for (const part of trimmed.split(",")) {
    const eq = part.indexOf("=");
    const key = (eq === -1 ? part : part.slice(0, eq)).trim();
    const value = eq === -1 ? "" : part.slice(eq + 1).trim();
    if (!isKey(key)) {
      return { rule: `${JSON.stringify(key.slice(0, 40))} is not a limit: the limits are ${form}` };
    }
    if (budget[key] !== null) return { rule: `${key} is given twice` };
    if (value === "") return { rule: `${key}= has no value` };
    const parsed = parseBudgetLimit(key, value);
    if (typeof parsed === "string") return { rule: `${key}=${value.slice(0, 40)}: ${key} is ${parsed}` };
    budget[key] = parsed;
  }
  return budget;
}

function isKey(key: string): key is RunBudgetKey {
  return (RUN_BUDGET_KEYS as readonly string[]).includes(key);
}

/**
 * One limit of a budget: tokens as --max-tokens takes them, usd as --max-cost, minutes a whole number from
 * 1 to a year. The number, or the rule it breaks.
 */
export function parseBudgetLimit(key: RunBudgetKey, value: string): number | string {
  if (key === "tokens") return parseTokenCap(value);
  if (key === "usd") return parseCostCap(value);
  const minutes = /^[0-9]{1,6}$/.test(value) ? Number(value) : Number.NaN;
  if (!(minutes >= 1 && minutes <= MAX_BUDGET_MINUTES)) {
    return `a whole number of minutes from 1 to ${MAX_BUDGET_MINUTES} (a year)`;
  }
  return minutes;
}

/** Whether two budgets set the same limits (null: no budget). */
export function sameBudget(a: RunBudget | null, b: RunBudget | null): boolean {
  if (a === null || b === null) return a === b;
  return RUN_BUDGET_KEYS.every((k) => a[k] === b[k]);
}

/** "2M", "50k", "1500": a token count as --run-budget would take it back. */
function compactTokens(n: number): string {
  for (const [suffix, unit] of [
    ["G", 1e9],
    ["M", 1e6],
    ["k", 1e3],
  ] as const) {
    if (n >= unit && n % unit === 0) return `${n / unit}${suffix}`;
  }
  return String(n);
}

/** The budget as --run-budget takes it: "tokens=2M,usd=25,minutes=600". */
export function formatRunBudget(budget: RunBudget): string {
  const parts: string[] = [];
  if (budget.tokens !== null) parts.push(`tokens=${compactTokens(budget.tokens)}`);
  if (budget.usd !== null) parts.push(`usd=${budget.usd}`);
  if (budget.minutes !== null) parts.push(`minutes=${budget.minutes}`);
  return parts.join(",");
}

/**
 * What a run has spent: every record's usage and every live dispatch's so far, as its ledger sums them.
 * Dollars count where a figure is known; `unpriced` says how many dispatches used tokens no figure covers
 * (their dollars are not in `costUsd`, which is then a floor).
 */
export interface RunSpend {
  tokens: number;
  costUsd: number;
  unpriced: number;
  /** Dispatches counted whose spend is still live (not recorded). */
  live: number;
  /** Dispatches counted in all. */
  dispatches: number;
}

export const NO_RUN_SPEND: RunSpend = Object.freeze({
  tokens: 0,
  costUsd: 0,
  unpriced: 0,
  live: 0,
  dispatches: 0,
});

/** One dispatch's part of a run's spend: its tokens billed, its dollars (null: no figure), live or not. */
export interface DispatchSpend {
  tokens: number;
  costUsd: number | null;
  live: boolean;
}

/** `spend` with one dispatch's part added. */
export function addDispatchSpend(spend: RunSpend, part: DispatchSpend): RunSpend {
  return {
    tokens: spend.tokens + part.tokens,
    costUsd: spend.costUsd + (part.costUsd ?? 0),
    unpriced: spend.unpriced + (part.costUsd === null && part.tokens > 0 ? 1 : 0),
    live: spend.live + (part.live ? 1 : 0),
    dispatches: spend.dispatches + 1,
  };
}

/**
 * `spend` with one live dispatch's part as it stands now in place of the one summed (`before`, null when
 * the sum did not have it yet): how a supervisor counts itself, fresher than its part in the ledger.
 */
export function replacePart(
  spend: RunSpend,
  before: Omit<DispatchSpend, "live"> | null,
  now: Omit<DispatchSpend, "live">,
): RunSpend {
  const unpriced = (p: Omit<DispatchSpend, "live"> | null) =>
    p !== null && p.costUsd === null && p.tokens > 0 ? 1 : 0;
  const added = before === null ? 1 : 0;
  return {
    tokens: spend.tokens - (before?.tokens ?? 0) + now.tokens,
    costUsd: spend.costUsd - (before?.costUsd ?? 0) + (now.costUsd ?? 0),
    unpriced: spend.unpriced - unpriced(before) + unpriced(now),
    live: spend.live + added,
    dispatches: spend.dispatches + added,
  };
}

/** "1h30m", "45m": minutes as people read them. */
function minutesWords(minutes: number): string {
  const whole = Math.floor(minutes);
  const h = Math.floor(whole / 60);
  const m = whole % 60;
  return h === 0 ? `${m}m` : m === 0 ? `${h}h` : `${h}h${m}m`;
}

/**
 * The first limit of the run's budget its spend has reached, or null: tokens, then dollars, then minutes
 * (`elapsedMs` since the run's first admission). The message names the run, what was spent and the limit
 * ("run nightly spent 2,000,512 tokens of --run-budget tokens=2M").
 */
export function runCrossing(
  run: string,
  budget: RunBudget,
  spend: RunSpend,
  elapsedMs: number,
): Crossing | null {
  const of = (limit: string) => `of --run-budget ${limit}`;
  if (budget.tokens !== null && spend.tokens >= budget.tokens) {
    return {
      cap: "run-tokens",
      limit: budget.tokens,
      used: spend.tokens,
      message: `run ${run} spent ${groupDigits(spend.tokens)} tokens ${of(`tokens=${compactTokens(budget.tokens)}`)}`,
    };
  }
  if (budget.usd !== null && spend.costUsd >= budget.usd) {
    const estimate = " (at list prices: an estimate on a subscription)";
    return {
      cap: "run-usd",
      limit: budget.usd,
      used: spend.costUsd,
      message: `run ${run} spent ${formatUsd(spend.costUsd)} ${of(`usd=${budget.usd}`)}${estimate}`,
    };
  }
  const minutes = elapsedMs / 60_000;
  if (budget.minutes !== null && minutes >= budget.minutes) {
    return {
      cap: "run-minutes",
      limit: budget.minutes,
      used: minutes,
      message: `run ${run} has run ${minutesWords(minutes)} ${of(`minutes=${budget.minutes}`)}`,
    };
  }
  return null;
}

/** When a minutes budget runs out (ms since the epoch), or null without one. */
export function budgetEndsAt(budget: RunBudget, createdAtMs: number): number | null {
  return budget.minutes === null ? null : createdAtMs + budget.minutes * 60_000;
}
