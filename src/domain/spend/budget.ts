// A dispatch's caps (specs/dispatch.md, "Caps on spending"): --max-tokens and --max-cost, how they are
// written, and when the spend so far has crossed one. Pure: the supervisor asks `crossing` after each
// poll that brought usage, and `decide` (watch.ts) stops the agent on its answer.

/** The caps of one dispatch, from spec.json; null: no cap. */
export interface SpendCaps {
  /** Tokens billed, input (cached included) plus output (reasoning included): `billedTokens`. */
  maxTokens: number | null;
  maxCostUsd: number | null;
}

export const NO_SPEND_CAPS: SpendCaps = Object.freeze({ maxTokens: null, maxCostUsd: null });

/** The largest caps accepted: beyond them a cap caps nothing. */
export const MAX_TOKENS_CAP = 1_000_000_000_000;
export const MAX_COST_CAP_USD = 1_000_000;

const MULTIPLIERS: Record<string, number> = { "": 1, k: 1_000, m: 1_000_000, g: 1_000_000_000 };

/**
 * `--max-tokens`: a whole number of tokens, in digits, optionally with k, M or G (50000, 50k, 2M), from 1
 * to 10^12. Returns the count, or the rule it breaks.
 */
export function parseTokenCap(text: string): number | string {
  const rule =
    "a whole number of tokens from 1 to 1000000000000, in digits, optionally with k, M or G (50000, 50k, 2M)";
  const m = /^([0-9]+)(?:\.([0-9]+))?([kKmMgG]?)$/.exec(text.trim());
  if (m === null) return rule;
  const [, whole = "", fraction, suffix = ""] = m;
  const multiplier = MULTIPLIERS[suffix.toLowerCase()] ?? 1;
  if (fraction !== undefined && multiplier === 1) return rule;
  const value = Number(`${whole}${fraction === undefined ? "" : `.${fraction}`}`) * multiplier;
  if (!Number.isInteger(value) || value < 1 || value > MAX_TOKENS_CAP) return rule;
  return value;
}

/** `--max-cost`: dollars, a positive decimal number (5, 0.50, $12.5) up to 1000000. The amount, or the rule. */
export function parseCostCap(text: string): number | string {
  const rule = "a number of US dollars above 0 and at most 1000000, such as 5 or 0.50";
  const m = /^\$?([0-9]+(?:\.[0-9]+)?)$/.exec(text.trim());
  if (m === null) return rule;
  const value = Number(m[1]);
  if (!Number.isFinite(value) || value <= 0 || value > MAX_COST_CAP_USD) return rule;
  return value;
}

/** What a dispatch has spent so far: tokens billed, and dollars where they are known. */
export interface Spend {
  tokens: number;
  costUsd: number | null;
  /** Whether the dollars are catherd's price (an estimate) rather than the CLI's own figure. */
  priced: boolean;
}

/**
 * A cap the spend has reached: which — the dispatch's own, or its run's budget (run-budget.ts) — its
 * limit, what was used, and the sentence that says so.
 */
export interface Crossing {
  cap: "tokens" | "cost" | "run-tokens" | "run-usd" | "run-minutes";
  limit: number;
  used: number;
  message: string;
}

/**
 * "51,230": a whole number with its thousands grouped. Not Intl.NumberFormat: its first use loads ICU's
 * locale data, about 7 MB of the supervisor's memory for a comma.
 */
export function groupDigits(n: number): string {
  const digits = String(Math.trunc(Math.abs(n)));
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return n < 0 ? `-${grouped}` : grouped;
}

/** "$5.12": cents for amounts above a dollar, four decimals below. */
export function formatUsd(usd: number): string {
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

/** The first cap the spend has reached, or null ("used 51,230 tokens of --max-tokens 50000"). */
export function crossing(caps: SpendCaps, spend: Spend): Crossing | null {
  if (caps.maxTokens !== null && spend.tokens >= caps.maxTokens) {
    return {
      cap: "tokens",
      limit: caps.maxTokens,
      used: spend.tokens,
      message: `used ${groupDigits(spend.tokens)} tokens of --max-tokens ${caps.maxTokens}`,
    };
  }
  if (caps.maxCostUsd !== null && spend.costUsd !== null && spend.costUsd >= caps.maxCostUsd) {
    const how = spend.priced ? " (catherd's estimate at list prices)" : "";
    return {
      cap: "cost",
      limit: caps.maxCostUsd,
      used: spend.costUsd,
      message: `used ${formatUsd(spend.costUsd)} of --max-cost ${caps.maxCostUsd}${how}`,
    };
  }
  return null;
}

/**
 * The caps a chain's next attempt gets (its attempts share one budget): what this attempt's caps leave
 * after what it spent. A string names a cap that is spent.
 */
export function remainingCaps(caps: SpendCaps, spent: Spend): SpendCaps | string {
  const maxTokens = caps.maxTokens === null ? null : caps.maxTokens - spent.tokens;
  if (maxTokens !== null && maxTokens < 1) {
    return `the chain's --max-tokens is spent (used ${groupDigits(spent.tokens)} of ${caps.maxTokens})`;
  }
  let maxCostUsd = caps.maxCostUsd;
  if (maxCostUsd !== null && spent.costUsd !== null) {
    maxCostUsd = Math.round((maxCostUsd - spent.costUsd) * 1e6) / 1e6;
    if (maxCostUsd <= 0) {
      return `the chain's --max-cost is spent (used ${formatUsd(spent.costUsd)} of ${caps.maxCostUsd})`;
    }
  }
  return { maxTokens, maxCostUsd };
}
