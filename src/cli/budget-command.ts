import { type BudgetView, budgetsView, removeBudgetAsked, setBudgetAsked } from "../dispatch/budgets-view.js";
import { CatherdError } from "../domain/errors.js";
import { BUDGET_MEASURES, type PeriodBudget } from "../domain/quota/period-budget.js";
import { catherdHome } from "../infra/paths.js";
import { type Command, stringOption } from "./command-io.js";
import { renderBudgets } from "./quota-text.js";

// `catherd budget set|list|remove` (specs/quota.md, "Budgets by period"): limits of dollars, tokens or
// minutes on what the home, a CLI, an account or a tag spends per day, week or month.

type BudgetResult =
  | { budgets: BudgetView[] }
  | { set: PeriodBudget }
  | { removed: { scope: string; per: string } };

const USAGE_FIX =
  "catherd budget set <scope> --per day|week|month [--usd N] [--tokens N] [--minutes N] | catherd budget list | catherd budget remove <scope> --per <period>";

export const budgetCommand: Command<BudgetResult> = {
  name: "budget",
  synopsis: "set <scope> | list | remove <scope>",
  positionals: "many",
  summary:
    "Sets a budget that renews — for the whole home, a CLI (backend:<cli>), an account " +
    "(account:<cli>/<name>) or a tag (tag:<tag>, see dispatch --tag) — per day, week or month, in dollars, " +
    "tokens or minutes; given again for the same scope and period it replaces it. At 80 % a dispatch's " +
    "--notify is run once with CATHERD_BUDGET_WARNING; at 100 % new work it covers waits in its run's queue " +
    "until the period turns (work already running finishes). Lists each budget with what its period used " +
    "and has left; removes one.",
  json: "{budgets: [{scope, per, usd, tokens, minutes, periodStart, renews, used, left, spent}]} | {set: {…}} | {removed: {…}}",
  options: {
    per: {
      type: "string",
      value: "<day|week|month>",
      description: "the period the budget renews by (set, remove)",
    },
    usd: {
      type: "string",
      value: "<dollars>",
      description: "a limit of US dollars per period, as --max-cost takes it (set)",
    },
    tokens: {
      type: "string",
      value: "<n>",
      description: "a limit of tokens billed per period: 50000, 50k, 2M (set)",
    },
    minutes: {
      type: "string",
      value: "<n>",
      description: "a limit of the dispatches' wall minutes per period (set)",
    },
  },
  async handler(input) {
    const home = catherdHome();
    const [sub, scope, ...extra] = input.positionals;
    const per = stringOption(input, "per");
    if (sub === "list" && scope === undefined) {
      const budgets = budgetsView(home, Date.now());
      return { data: { budgets }, text: renderBudgets(budgets) };
    }
    if ((sub !== "set" && sub !== "remove") || scope === undefined || extra.length > 0) {
      throw new CatherdError(
        "E_INPUT_INVALID",
        `catherd budget ${input.positionals.join(" ")}: not a use of it`,
        {
          fix: USAGE_FIX,
        },
      );
    }
    if (sub === "remove") {
      const removed = await removeBudgetAsked(home, { scope, per });
      return { data: { removed }, text: `removed the budget ${removed.scope} per ${removed.per}\n` };
    }
    const limits = Object.fromEntries(
      BUDGET_MEASURES.map((m) => [m, stringOption(input, m)]).filter(([, v]) => v !== undefined),
    );
    const set = await setBudgetAsked(home, { scope, per, limits }, new Date());
    return { data: { set }, text: `set the budget ${set.scope} per ${set.per}\n` };
  },
};
