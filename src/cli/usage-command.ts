import { type AccountView, accountsView } from "../dispatch/accounts-view.js";
import { type BudgetView, budgetsView } from "../dispatch/budgets-view.js";
import { usageEntries } from "../dispatch/read/usage-entries.js";
import { CatherdError } from "../domain/errors.js";
import { requireId } from "../domain/ids.js";
import { formatUsd, groupDigits } from "../domain/spend/budget.js";
import {
  USAGE_GROUPINGS,
  type UsageGrouping,
  type UsageTotal,
  usageTotals,
} from "../domain/spend/usage-totals.js";
import { parseDuration } from "../domain/text/duration.js";
import { systemClock } from "../infra/clock.js";
import { catherdHome } from "../infra/paths.js";
import { type Command, stringOption } from "./command-io.js";
import { periodBudgetLine, renderAccounts } from "./quota-text.js";
import { cell, count } from "./render.js";

/** The longest --since: ten years. */
const MAX_SINCE_MS = 3650 * 86_400_000;

/** What `catherd usage --json` prints. */
export interface UsageReport {
  by: UsageGrouping;
  /** The start of the window (--since), null: every dispatch. */
  since: string | null;
  /** The run asked for (--run), null: every run of the home. */
  run: string | null;
  groups: UsageTotal[];
  total: UsageTotal;
  /** With `--by account`: each account's windows, whether it takes work, what waits for it. */
  accounts?: AccountView[];
  /** Dispatch folders whose files could not be read: their spend is not in the totals. */
  unreadable: number;
  /** The home's budgets by period, each with its period's use and what is left (specs/quota.md). */
  budgets: BudgetView[];
}

export const usageCommand: Command<UsageReport> = {
  name: "usage",
  synopsis: "",
  positionals: 0,
  summary:
    "Spend totals of every dispatch catherd ran in this home — every run, or one with --run — recorded ones " +
    "from their records and live ones so far: tokens as billed (input includes cached input; output " +
    "includes reasoning) and dollars where a figure is known, the CLI's own or catherd's estimate at list " +
    "prices (marked ~; for a subscription every dollar is an estimate). Grouped by run, backend, model, day " +
    "(of admission, UTC), name or account — then each account's windows, whether it takes work and what " +
    "waits for it, as `catherd account list` shows them — the largest spend first. Above the table, one " +
    "line per budget by period (`catherd budget`): what its period used, what is left, and when it renews.",
  json: "{by, since, run, groups: [{key, dispatches, live, tokens, input, cachedInput, cacheWrite, output, reasoning, costUsd, pricedUsd, unpriced}], total, unreadable, budgets: [{scope, per, usd, tokens, minutes, periodStart, renews, used, left, spent}], accounts?}",
  options: {
    by: {
      type: "string",
      value: "<run|backend|model|day|name|account>",
      description: "what to total by",
      default: "run",
      choices: USAGE_GROUPINGS,
    },
    since: {
      type: "string",
      value: "<d>",
      description: "only dispatches admitted this long ago or later, e.g. 7d or 12h",
      default: "all",
    },
    run: {
      type: "string",
      value: "<r>",
      description: "only this run",
      default: "every run of the home",
    },
  },
  async handler(input) {
    const by = groupingOf(stringOption(input, "by"));
    const sinceText = stringOption(input, "since");
    const now = systemClock.wallNow().getTime();
    const sinceMs = sinceText === undefined ? null : now - parseDuration("--since", sinceText, MAX_SINCE_MS);
    const runText = stringOption(input, "run");
    const run = runText === undefined ? null : requireId("--run", runText);
    const home = catherdHome();
    const { entries, unreadable } = usageEntries(home, run);
    const { groups, total } = usageTotals(entries, by, sinceMs);
    const report: UsageReport = {
      by,
      since: sinceMs === null ? null : new Date(sinceMs).toISOString(),
      run,
      groups,
      total,
      unreadable,
      ...(by === "account" ? { accounts: accountsView(home, now) } : {}),
      budgets: budgetsView(home, now),
    };
    const windows = report.accounts === undefined ? "" : `\n${renderAccounts(report.accounts, now)}`;
    return { data: report, text: `${renderUsage(report)}${windows}` };
  },
};

function groupingOf(text: string | undefined): UsageGrouping {
  if (text === undefined) return "run";
  if ((USAGE_GROUPINGS as readonly string[]).includes(text)) return text as UsageGrouping;
  throw new CatherdError("E_INPUT_INVALID", `--by ${JSON.stringify(text.slice(0, 40))} is not a grouping`, {
    fix: `give --by ${USAGE_GROUPINGS.join(", --by ")}`,
  });
}

/** "$3.20", "~$0.41" (all of it catherd's estimate), "$3.20+" (some tokens without a figure). */
function costWords(t: UsageTotal): string {
  if (t.costUsd === 0) return t.unpriced > 0 ? "?" : "$0";
  const estimate = t.costUsd > 0 && t.pricedUsd === t.costUsd ? "~" : "";
  return `${estimate}${formatUsd(t.costUsd)}${t.unpriced > 0 ? "+" : ""}`;
}

/** The table: one line per group, then the total; notes on estimates and on what is left out. */
export function renderUsage(report: UsageReport): string {
  const budgets = report.budgets.map((b) => `${periodBudgetLine(b)}\n`).join("");
  return `${budgets}${renderTable(report)}`;
}

function renderTable(report: UsageReport): string {
  const scope = `${report.run === null ? "every run" : `run ${report.run}`}${report.since === null ? "" : ` since ${report.since.slice(0, 16).replace("T", " ")} UTC`}`;
  if (report.total.dispatches === 0) return `no dispatches spent anything in ${scope}\n`;
  const keyWidth = Math.min(32, Math.max(report.by.length, 5, ...report.groups.map((g) => g.key.length)));
  const header = `${cell(report.by.toUpperCase(), keyWidth)} ${cell("DISPATCHES", 10)} ${cell("TOKENS", 8)} ${cell("INPUT", 8)} ${cell("CACHED", 8)} ${cell("OUTPUT", 8)} COST`;
  const line = (t: UsageTotal) =>
    `${cell(t.key, keyWidth)} ${cell(`${t.dispatches}${t.live > 0 ? ` (${t.live} live)` : ""}`, 10)} ${cell(count(t.tokens), 8)} ${cell(count(t.input), 8)} ${cell(count(t.cachedInput), 8)} ${cell(count(t.output), 8)} ${costWords(t)}`.trimEnd();
  const lines = [
    `spend in ${scope}, by ${report.by}:`,
    header,
    ...report.groups.map(line),
    line(report.total),
  ];
  const t = report.total;
  if (t.pricedUsd > 0) {
    lines.push(
      `~ ${formatUsd(t.pricedUsd)} of it is catherd's estimate at list prices (the CLI gave no figure); on a subscription all of it is an estimate`,
    );
  }
  if (t.unpriced > 0)
    lines.push(`+ ${groupDigits(t.unpriced)} part(s) used tokens that no price covers: not in COST`);
  if (report.unreadable > 0) {
    lines.push(
      `${report.unreadable} dispatch folder(s) could not be read: not counted (catherd status shows which)`,
    );
  }
  return `${lines.join("\n")}\n`;
}
