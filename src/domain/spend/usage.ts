// Token usage and cost, exactly (specs/record.md, "usage"): what one report of a CLI says, checked, and
// the tally of a whole dispatch folded from its reports in any order the files give them. Pure: prices
// come in as a function (src/infra/prices.ts loads the table only when a price is needed).

/**
 * Tokens of one model's use, as its provider bills them. `input` is every prompt token — uncached, read
 * from the prompt cache and written to it — and `output` every output token, reasoning included; the
 * other three are parts of those two.
 */
export interface TokenCounts {
  input: number;
  /** Of `input`: read from the provider's prompt cache. */
  cachedInput: number;
  /** Of `input`: written to the prompt cache (Anthropic's cache creation). */
  cacheWrite: number;
  output: number;
  /** Of `output`: reasoning (thinking) tokens. */
  reasoning: number;
}

export const TOKEN_FIELDS = ["input", "cachedInput", "cacheWrite", "output", "reasoning"] as const;

export const ZERO_COUNTS: TokenCounts = Object.freeze({
  input: 0,
  cachedInput: 0,
  cacheWrite: 0,
  output: 0,
  reasoning: 0,
});

/** The tokens a cap counts (`--max-tokens`): every input and output token billed, cached input included. */
export function billedTokens(counts: TokenCounts): number {
  return counts.input + counts.output;
}

/** One model's share of a report: its tokens and the CLI's own dollar figure for them (null: none). */
export interface ModelUse {
  /** As the CLI names it; null: the dispatch's model (its --model, else the CLI's configured default). */
  model: string | null;
  tokens: TokenCounts;
  costUsd: number | null;
}

/**
 * What one line says about usage. `add`: this much more (an opencode step). `message`: the use of one
 * model response, counted once per `key` — a later report of the same key replaces it (Claude repeats a
 * message's usage on each of its content blocks). `run`: the CLI's whole use in this run; it replaces
 * everything counted (Claude's and gemini's result). `thread`: the CLI's whole use of its thread, earlier
 * runs of a resumed thread included (codex's turn.completed): counted only when nothing finer was.
 */
export interface UsageReport {
  scope: "add" | "message" | "run" | "thread";
  key: string | null;
  uses: readonly ModelUse[];
}

/** No report holds more than this many tokens in one field, nor a cost above MAX_REPORT_USD: beyond is absurd. */
export const MAX_REPORT_TOKENS = 10_000_000_000;
export const MAX_REPORT_USD = 1_000_000;

/** A field as a CLI printed it, checked: a count, absent (0), or what is wrong with it. */
export function tokenField(value: unknown, name: string): number | string {
  if (value === undefined || value === null) return 0;
  if (typeof value !== "number") return `${name} is a ${typeof value}, not a number`;
  if (!Number.isFinite(value)) return `${name} is ${value}`;
  if (value < 0) return `${name} is negative (${value})`;
  if (!Number.isInteger(value)) return `${name} is not a whole number (${value})`;
  if (value > MAX_REPORT_TOKENS) return `${name} is absurdly large (${value})`;
  return value;
}

/** A CLI's dollar figure, checked: the figure, null when absent, or what is wrong with it. */
export function costField(value: unknown, name: string): { usd: number | null } | string {
  if (value === undefined || value === null) return { usd: null };
  if (typeof value !== "number") return `${name} is a ${typeof value}, not a number`;
  if (!Number.isFinite(value) || value < 0 || value > MAX_REPORT_USD)
    return `${name} is not a plausible cost (${value})`;
  return { usd: value };
}

/** Counts from checked fields; a string is the first field that is wrong, or a part larger than its whole. */
export function countsOf(fields: Record<keyof TokenCounts, number | string>): TokenCounts | string {
  for (const key of TOKEN_FIELDS) {
    const value = fields[key];
    if (typeof value === "string") return value;
  }
  const counts = fields as TokenCounts;
  if (counts.cachedInput + counts.cacheWrite > counts.input)
    return `cached input and cache writes (${counts.cachedInput} + ${counts.cacheWrite}) exceed input (${counts.input})`;
  if (counts.reasoning > counts.output)
    return `reasoning (${counts.reasoning}) exceeds output (${counts.output})`;
  return counts;
}

export function addCounts(a: TokenCounts, b: TokenCounts): TokenCounts {
  return {
    input: a.input + b.input,
    cachedInput: a.cachedInput + b.cachedInput,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    output: a.output + b.output,
    reasoning: a.reasoning + b.reasoning,
  };
}

function subtractCounts(a: TokenCounts, b: TokenCounts): TokenCounts {
  return {
    input: a.input - b.input,
    cachedInput: a.cachedInput - b.cachedInput,
    cacheWrite: a.cacheWrite - b.cacheWrite,
    output: a.output - b.output,
    reasoning: a.reasoning - b.reasoning,
  };
}

/** Whether any field of `a` is below the same field of `b`. */
function anyBelow(a: TokenCounts, b: TokenCounts): boolean {
  return TOKEN_FIELDS.some((key) => a[key] < b[key]);
}

function isZero(counts: TokenCounts): boolean {
  return TOKEN_FIELDS.every((key) => counts[key] === 0);
}

/** One model's account: all its tokens, the CLI's dollars for some of them, and the tokens it gave none for. */
export interface ModelAccount {
  model: string | null;
  tokens: TokenCounts;
  /** The CLI's own dollar figures, summed; null when it gave none. */
  reportedUsd: number | null;
  /** The tokens the CLI gave no dollar figure for: what catherd prices. */
  unreported: TokenCounts;
}

/**
 * Every report of a dispatch, folded. Memory is bounded: message keys are remembered up to MAX_MESSAGE_KEYS
 * (a message reported again after that is counted again).
 */
export interface UsageTally {
  run: ModelAccount[] | null;
  thread: ModelAccount[] | null;
  /** `add` and `message` reports, by model. */
  counted: Map<string, ModelAccount>;
  /** What was counted for each message key. */
  messages: Map<string, readonly ModelUse[]>;
}

export const MAX_MESSAGE_KEYS = 50_000;

export function emptyTally(): UsageTally {
  return { run: null, thread: null, counted: new Map(), messages: new Map() };
}

function accountOf(use: ModelUse): ModelAccount {
  return {
    model: use.model,
    tokens: use.tokens,
    reportedUsd: use.costUsd,
    unreported: use.costUsd === null ? use.tokens : ZERO_COUNTS,
  };
}

/** Reports of one model merged: tokens summed, the CLI's dollars summed where it gave them. */
function merged(into: ModelAccount, use: ModelUse, sign: 1 | -1): ModelAccount {
  const op = sign === 1 ? addCounts : subtractCounts;
  const cost = use.costUsd;
  return {
    model: into.model,
    tokens: op(into.tokens, use.tokens),
    reportedUsd: cost === null ? into.reportedUsd : (into.reportedUsd ?? 0) + sign * cost,
    unreported: cost === null ? op(into.unreported, use.tokens) : into.unreported,
  };
}

function byModel(uses: readonly ModelUse[]): ModelAccount[] {
  const accounts = new Map<string, ModelAccount>();
  for (const use of uses) {
    const key = use.model ?? "";
    const known = accounts.get(key);
    accounts.set(key, known === undefined ? accountOf(use) : merged(known, use, 1));
  }
  return [...accounts.values()];
}

/** The accounts that stand: the run's total, else what was counted, else the thread's total. */
export function accounts(tally: UsageTally): ModelAccount[] {
  if (tally.run !== null) return tally.run;
  if (tally.counted.size > 0) return [...tally.counted.values()];
  return tally.thread ?? [];
}

/** The tokens of every model together. */
export function totalOf(list: readonly ModelAccount[]): TokenCounts {
  return list.reduce((sum, a) => addCounts(sum, a.tokens), ZERO_COUNTS);
}

function reportedOf(list: readonly ModelAccount[]): number | null {
  let sum: number | null = null;
  for (const a of list) if (a.reportedUsd !== null) sum = (sum ?? 0) + a.reportedUsd;
  return sum;
}

/** Whether `next` would lower what `before` counted: a token field, or the CLI's own dollars. */
function lowers(next: readonly ModelAccount[], before: readonly ModelAccount[]): boolean {
  if (anyBelow(totalOf(next), totalOf(before))) return true;
  const was = reportedOf(before);
  const now = reportedOf(next);
  return was !== null && now !== null && now < was;
}

function count(tally: UsageTally, use: ModelUse, sign: 1 | -1): void {
  const key = use.model ?? "";
  const known = tally.counted.get(key);
  if (known === undefined) tally.counted.set(key, accountOf(use));
  else tally.counted.set(key, merged(known, use, sign));
}

/**
 * Folds one report into the tally (mutates it: this runs per usage line). Returns null, or why the report
 * was ignored: a total lower than what was counted before it, or a message reported again with less.
 * Totals therefore never decrease within a source.
 */
export function addUsage(tally: UsageTally, report: UsageReport): string | null {
  switch (report.scope) {
    case "run": {
      const next = byModel(report.uses);
      if (lowers(next, accounts(tally))) return "a run total lower than what was counted before it";
      tally.run = next;
      return null;
    }
    case "thread": {
      const next = byModel(report.uses);
      if (tally.thread !== null && lowers(next, tally.thread))
        return "a thread total lower than the one before it";
      tally.thread = next;
      return null;
    }
    case "add":
      for (const use of report.uses) count(tally, use, 1);
      return null;
    case "message": {
      const key = report.key;
      const before = key === null ? undefined : tally.messages.get(key);
      if (before !== undefined) {
        if (lowers(byModel(report.uses), byModel(before))) return `message ${key} reported again with less`;
        for (const use of before) count(tally, use, -1);
      }
      for (const use of report.uses) count(tally, use, 1);
      if (key !== null && (before !== undefined || tally.messages.size < MAX_MESSAGE_KEYS)) {
        tally.messages.set(key, report.uses);
      }
      return null;
    }
  }
}

/** Where a dollar figure comes from (specs/record.md): the CLI's own, or catherd's price of the tokens. */
export const COST_SOURCES = ["reported", "priced"] as const;
export type CostSource = (typeof COST_SOURCES)[number];

/** A price of tokens: dollars, or null when the model has no known price (never a guess). */
export type PriceOf = (model: string | null, tokens: TokenCounts) => number | null;

export interface Cost {
  usd: number | null;
  source: CostSource | null;
}

/**
 * The cost of accounts: the CLI's own dollars, plus catherd's price of the tokens it gave none for. Source
 * `reported` when the CLI's figures cover every token, `priced` when catherd priced some; null (and no
 * dollars) when nothing was used and reported, or some tokens have no known price.
 */
export function costOf(list: readonly ModelAccount[], price: PriceOf): Cost {
  let usd = reportedOf(list);
  let priced = false;
  for (const a of list) {
    if (isZero(a.unreported)) continue;
    const p = price(a.model, a.unreported);
    if (p === null) return { usd: null, source: null };
    usd = (usd ?? 0) + p;
    priced = true;
  }
  if (usd === null) return { usd: null, source: null };
  return { usd, source: priced ? "priced" : "reported" };
}

/** Whether any account holds tokens the CLI gave no dollar figure for (pricing them needs the table). */
export function needsPrice(list: readonly ModelAccount[]): boolean {
  return list.some((a) => !isZero(a.unreported));
}
