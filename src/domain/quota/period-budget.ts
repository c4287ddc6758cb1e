import { BACKEND_IDS, type BackendId } from "../vocab.js";
import { type Period, type PeriodSpan, periodAt } from "./period.js";

// Budgets by period (specs/quota.md, "Budgets by period"): a limit of dollars, tokens or minutes on what
// the whole home, a CLI, an account or a tag spends in a day, a week or a month; a warning at 80 %, and
// at 100 % no new work starts until the period turns. Pure: what each dispatch spent is read by
// src/quota/period-spend.ts, the budgets by src/quota/budgets.ts.

/** The measures a budget may limit, in the order they are judged and shown. */
export const BUDGET_MEASURES = ["usd", "tokens", "minutes"] as const;
export type BudgetMeasure = (typeof BUDGET_MEASURES)[number];

/** The home's file of budgets by period: `<home>/budgets.json`. */
export const BUDGETS_FILE_NAME = "budgets.json";

/** The most budgets a home declares. */
export const MAX_BUDGETS = 100;
/** A tag: 1-40 of a-z 0-9 . _ -, starting with a letter or digit. */
export const TAG_PATTERN = /^[a-z0-9][a-z0-9._-]{0,39}$/;
/** The share of a limit at which a budget warns (the `--notify` hook, once per budget and period). */
export const WARN_FRACTION = 0.8;

/** What a budget covers: the home, one CLI, one account of a CLI, or the dispatches given a tag. */
export type BudgetScope =
  | { kind: "home" }
  | { kind: "backend"; backend: BackendId }
  | { kind: "account"; backend: BackendId; account: string }
  | { kind: "tag"; tag: string };

/** A budget as budgets.json holds it: its scope as written, its period, its limits (null: none). */
export interface PeriodBudget {
  scope: string;
  per: Period;
  usd: number | null;
  tokens: number | null;
  minutes: number | null;
}

/** What a dispatch is, for the budgets that may apply to it. */
export interface BudgetSubject {
  backend: BackendId | null;
  /** The account it runs on; null: none (exec, or not started). */
  account: string | null;
  tags: readonly string[];
}

/** One dispatch's part of a period's spend, admitted at `atMs`. */
export interface PeriodEntry extends BudgetSubject {
  atMs: number;
  usd: number;
  tokens: number;
  minutes: number;
}

const ACCOUNT_NAME = /^[a-z0-9][a-z0-9._-]{0,39}$/;

/**
 * `home`, `backend:<cli>`, `account:<cli>/<name>`, `tag:<tag>`: the scope, or the rule the text breaks.
 * An account's name is spelled as `catherd account` spells it; the CLI must be one with accounts.
 */
export function parseScope(text: string): BudgetScope | { rule: string } {
  const form = "home, backend:<cli>, account:<cli>/<name> or tag:<tag>";
  if (text === "home") return { kind: "home" };
  const colon = text.indexOf(":");
  const kind = colon === -1 ? "" : text.slice(0, colon);
  const rest = text.slice(colon + 1);
  const backendOf = (id: string) => (BACKEND_IDS as readonly string[]).includes(id) && id !== "exec";
  if (kind === "backend" && backendOf(rest)) return { kind, backend: rest as BackendId };
  if (kind === "account") {
    const [cli = "", name = "", ...more] = rest.split("/");
    if (backendOf(cli) && ACCOUNT_NAME.test(name) && !name.includes("..") && more.length === 0) {
      return { kind, backend: cli as BackendId, account: name };
    }
  }
  if (kind === "tag" && TAG_PATTERN.test(rest)) return { kind, tag: rest };
  return { rule: `a scope is ${form} (a CLI of ${BACKEND_IDS.filter((b) => b !== "exec").join(", ")})` };
}

/** The scope as a file name's part: `home`, `backend~codex`, `account~codex~work`, `tag~nightly`. */
export function scopeKey(scope: string): string {
  return scope.replace(/[:/]/g, "~");
}

/** Whether a budget of `scope` counts what `subject` spends. */
export function scopeCovers(scope: BudgetScope, subject: BudgetSubject): boolean {
  if (scope.kind === "home") return true;
  if (scope.kind === "tag") return subject.tags.includes(scope.tag);
  if (subject.backend !== scope.backend) return false;
  return scope.kind === "backend" || subject.account === scope.account;
}

/** The limits of a budget that are set, as [measure, limit] pairs in the order of BUDGET_MEASURES. */
export function limitsOf(budget: PeriodBudget): [BudgetMeasure, number][] {
  return BUDGET_MEASURES.flatMap((m) =>
    budget[m] === null ? [] : [[m, budget[m]] as [BudgetMeasure, number]],
  );
}

/** What the entries in a budget's period spent, by measure. */
export type PeriodUse = Record<BudgetMeasure, number>;

/** What the entries `scope` covers and admitted within `span` spent. */
export function periodUse(scope: BudgetScope, entries: readonly PeriodEntry[], span: PeriodSpan): PeriodUse {
  const use: PeriodUse = { usd: 0, tokens: 0, minutes: 0 };
  for (const e of entries) {
    if (e.atMs < span.startMs || e.atMs >= span.endMs || !scopeCovers(scope, e)) continue;
    use.usd += e.usd;
    use.tokens += e.tokens;
    use.minutes += e.minutes;
  }
  return use;
}

/** A budget in its current period: what was used, and the first limit reached (null: none yet). */
export interface BudgetStanding {
  budget: PeriodBudget;
  span: PeriodSpan;
  use: PeriodUse;
  /** The first measure whose use reached its limit, with both; null while none has. */
  spent: { measure: BudgetMeasure; limit: number; used: number } | null;
  /** The measures at WARN_FRACTION of their limit or more. */
  warned: BudgetMeasure[];
}

/** Each budget as it stands at `nowMs` by the entries given (read from the home's dispatch folders). */
export function standings(
  budgets: readonly PeriodBudget[],
  entries: readonly PeriodEntry[],
  nowMs: number,
  shiftMs = 0,
): BudgetStanding[] {
  return budgets.flatMap((budget) => {
    const scope = parseScope(budget.scope);
    if ("rule" in scope) return [];
    const span = periodAt(budget.per, nowMs, shiftMs);
    const use = periodUse(scope, entries, span);
    const limits = limitsOf(budget);
    const reached = limits.find(([m, limit]) => use[m] >= limit);
    return [
      {
        budget,
        span,
        use,
        spent:
          reached === undefined ? null : { measure: reached[0], limit: reached[1], used: use[reached[0]] },
        warned: limits.filter(([m, limit]) => use[m] >= limit * WARN_FRACTION).map(([m]) => m),
      },
    ];
  });
}

/** The budgets of `budgets` that may hold a dispatch of `subject`'s backend and tags (its account aside). */
export function budgetsFor(
  budgets: readonly PeriodBudget[],
  subject: { backend: BackendId | null; tags: readonly string[] },
): PeriodBudget[] {
  return budgets.filter((b) => {
    const scope = parseScope(b.scope);
    if ("rule" in scope) return false;
    if (scope.kind === "account") return scope.backend === subject.backend;
    return scopeCovers(scope, { ...subject, account: null });
  });
}

/**
 * The first spent budget that holds a dispatch of `subject` whose pool is `pool` (null: it runs on no
 * account): the home's, its CLI's, a tag's, or, when every account of its pool is spent, its first
 * account's. Returns null when none holds it.
 */
export function heldBy(
  spent: readonly BudgetStanding[],
  subject: { backend: BackendId; tags: readonly string[]; pool: readonly string[] | null },
): BudgetStanding | null {
  const covering = (account: string | null) =>
    spent.find((s) => {
      const scope = parseScope(s.budget.scope);
      return !("rule" in scope) && scopeCovers(scope, { ...subject, account });
    }) ?? null;
  const general = spent.find((s) => {
    const scope = parseScope(s.budget.scope);
    return (
      !("rule" in scope) && scope.kind !== "account" && scopeCovers(scope, { ...subject, account: null })
    );
  });
  if (general !== undefined) return general;
  if (subject.pool === null || subject.pool.length === 0) return null;
  const byAccount = subject.pool.map(covering);
  return byAccount.every((s) => s !== null) ? (byAccount[0] ?? null) : null;
}

/** The accounts of `pool` no spent account budget holds: those a pick may choose from. */
export function accountsFree(
  spent: readonly BudgetStanding[],
  backend: BackendId,
  pool: readonly string[],
): string[] {
  return pool.filter(
    (account) =>
      !spent.some((s) => {
        const scope = parseScope(s.budget.scope);
        return (
          !("rule" in scope) && scope.kind === "account" && scopeCovers(scope, { backend, account, tags: [] })
        );
      }),
  );
}
