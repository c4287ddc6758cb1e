import { CatherdError } from "../domain/errors.js";
import { PERIODS, type Period } from "../domain/quota/period.js";
import {
  BUDGET_MEASURES,
  type BudgetMeasure,
  type BudgetStanding,
  type PeriodBudget,
  parseScope,
} from "../domain/quota/period-budget.js";
import { parseBudgetLimit } from "../domain/spend/run-budget.js";
import { readBudgets, removeBudget, setBudget } from "../quota/budgets.js";
import { budgetStandings } from "./read/period-standings.js";

// `catherd budget set|list|remove` and the budgets `catherd usage` shows (specs/quota.md, "Budgets by
// period"): the checks of a budget as given, and each budget with what its period used and has left.

/** A budget as `budget list` and `usage` show it: its limits, its period now, what it used and has left. */
export interface BudgetView extends PeriodBudget {
  /** The current period: its start and end (ISO), the end when it renews. */
  periodStart: string;
  renews: string;
  used: Record<BudgetMeasure, number>;
  /** What is left of each limit set (null: no limit), never below 0. */
  left: Record<BudgetMeasure, number | null>;
  /** The measure whose limit is reached: new work covered by it waits until `renews`; null: none. */
  spent: BudgetMeasure | null;
}

/** The home's budgets as they stand at `nowMs`, in the order set. */
export function budgetsView(home: string, nowMs: number): BudgetView[] {
  return budgetStandings(home, nowMs, { budgets: readBudgets(home) }).map(viewOf);
}

function viewOf(s: BudgetStanding): BudgetView {
  const round = (n: number) => Math.round(n * 1e4) / 1e4;
  const used = { usd: round(s.use.usd), tokens: s.use.tokens, minutes: round(s.use.minutes) };
  const left = Object.fromEntries(
    BUDGET_MEASURES.map((m) => {
      const limit = s.budget[m];
      return [m, limit === null ? null : round(Math.max(0, limit - s.use[m]))];
    }),
  ) as Record<BudgetMeasure, number | null>;
  const { scope, per, usd, tokens, minutes } = s.budget;
  return {
    scope,
    per,
    usd,
    tokens,
    minutes,
    periodStart: new Date(s.span.startMs).toISOString(),
    renews: new Date(s.span.endMs).toISOString(),
    used,
    left,
    spent: s.spent?.measure ?? null,
  };
}

/** What `budget set` is given, as text. */
export interface BudgetAsked {
  scope: string | undefined;
  per: string | undefined;
  limits: Partial<Record<BudgetMeasure, string>>;
}

const FIX =
  "catherd budget set <home|backend:<cli>|account:<cli>/<name>|tag:<tag>> --per day|week|month --usd N";

/** Checks and sets a budget; the one of the same scope and period is replaced. */
export async function setBudgetAsked(home: string, asked: BudgetAsked, at: Date): Promise<PeriodBudget> {
  const scope = scopeOf(asked.scope);
  const per = periodOf(asked.per);
  const budget: PeriodBudget = { scope, per, usd: null, tokens: null, minutes: null };
  for (const measure of BUDGET_MEASURES) {
    const text = asked.limits[measure];
    if (text === undefined) continue;
    const parsed = parseBudgetLimit(measure, text);
    if (typeof parsed === "string") {
      throw new CatherdError(
        "E_INPUT_INVALID",
        `--${measure} ${JSON.stringify(text.slice(0, 40))}: ${parsed}`,
        {
          fix: FIX,
        },
      );
    }
    budget[measure] = parsed;
  }
  if (BUDGET_MEASURES.every((m) => budget[m] === null)) {
    throw new CatherdError("E_INPUT_INVALID", `budget set ${scope} sets no limit`, {
      fix: `give --usd, --tokens or --minutes (${FIX})`,
    });
  }
  await setBudget(home, budget, at);
  return budget;
}

/** Removes a budget; E_INPUT_INVALID when the home has none of that scope and period. */
export async function removeBudgetAsked(
  home: string,
  asked: Omit<BudgetAsked, "limits">,
): Promise<{ scope: string; per: Period }> {
  const scope = scopeOf(asked.scope);
  const per = periodOf(asked.per);
  if (!(await removeBudget(home, scope, per))) {
    throw new CatherdError("E_INPUT_INVALID", `there is no budget ${scope} per ${per}`, {
      fix: "catherd budget list",
    });
  }
  return { scope, per };
}

function scopeOf(text: string | undefined): string {
  const parsed = text === undefined ? { rule: "a scope is missing" } : parseScope(text);
  if ("rule" in parsed) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `${JSON.stringify((text ?? "").slice(0, 80))}: ${parsed.rule}`,
      {
        fix: FIX,
      },
    );
  }
  return text as string;
}

function periodOf(text: string | undefined): Period {
  if ((PERIODS as readonly string[]).includes(text ?? "")) return text as Period;
  throw new CatherdError(
    "E_INPUT_INVALID",
    `--per ${JSON.stringify((text ?? "").slice(0, 40))}: day, week or month`,
    {
      fix: FIX,
    },
  );
}
