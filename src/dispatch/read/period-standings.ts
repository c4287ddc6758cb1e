import { periodAt } from "../../domain/quota/period.js";
import {
  type BudgetStanding,
  type PeriodBudget,
  parseScope,
  scopeCovers,
  standings,
} from "../../domain/quota/period-budget.js";
import type { RecordFile } from "../../domain/schemas.js";
import { budgetsOrNone, calendarShiftMs } from "../../quota/budgets.js";
import { periodEntries } from "./period-entries.js";
import { measureText } from "./queue-text.js";

// The home's budgets by period as they stand now (specs/quota.md, "Budgets by period"): budgets.json's,
// each with what its current period spent, summed from the dispatch folders that started in the earliest
// of their periods (created in it or in the one before). A home without budgets reads one missing file
// and no folder.

/** Each budget of `budgets` (the home's, by default) as it stands at `nowMs`. */
export function budgetStandings(
  home: string,
  nowMs: number,
  { budgets = budgetsOrNone(home), periodOfMs = nowMs }: StandingsAsked = {},
): BudgetStanding[] {
  if (budgets.length === 0) return [];
  const shift = calendarShiftMs();
  const starts = budgets.map((b) => periodAt(b.per, periodOfMs, shift));
  const sinceMs = Math.min(...starts.map((p) => p.startMs));
  // Work that waited in a queue started after it was created: folders of the period before are read too.
  const createdSinceMs = Math.min(...starts.map((p) => p.startMs - (p.endMs - p.startMs)));
  return standings(budgets, periodEntries(home, { sinceMs, createdSinceMs }, nowMs), periodOfMs, shift);
}

/** Which budgets, and the period of which instant (the current one by default). */
export interface StandingsAsked {
  budgets?: readonly PeriodBudget[];
  periodOfMs?: number;
}

/** A budget's warning due: the budget, its period's key, and `<scope>/<per> <used> of <limit>`. */
export interface BudgetWarning {
  budget: PeriodBudget;
  periodKey: string;
  text: string;
}

/**
 * The budgets covering `record`'s dispatch whose period of its start is at WARN_FRACTION of a limit
 * or more: the warnings its record may be the first to bring (each is claimed once, by its caller).
 */
export function budgetWarnings(home: string, record: RecordFile, nowMs: number): BudgetWarning[] {
  const subject = { backend: record.backend, account: record.account ?? null, tags: record.tags ?? [] };
  const budgets = budgetsOrNone(home).filter((b) => {
    const scope = parseScope(b.scope);
    return !("rule" in scope) && scopeCovers(scope, subject);
  });
  const started = Date.parse(record.startedAt ?? record.admittedAt ?? record.endedAt);
  const periodOfMs = Number.isFinite(started) ? started : nowMs;
  return budgetStandings(home, nowMs, { budgets, periodOfMs }).flatMap((s) => {
    const measure = s.warned[0];
    const limit = measure === undefined ? null : s.budget[measure];
    if (measure === undefined || limit === null) return [];
    const text = `${s.budget.scope}/${s.budget.per} ${measureText(measure, s.use[measure], limit)}`;
    return [{ budget: s.budget, periodKey: s.span.key, text }];
  });
}

/** The budgets spent in their current period: what holds new work (admission-rules.ts `Caps.periods`). */
export function spentBudgets(home: string, nowMs: number): BudgetStanding[] {
  return budgetStandings(home, nowMs).filter((s) => s.spent !== null);
}
