import type { RunBudgetView } from "../dispatch/read/budget-left.js";
import type { RowSpend } from "../dispatch/read/rows.js";
import type { RecordFile, SpecFile } from "../domain/schemas.js";
import { formatUsd, groupDigits } from "../domain/spend/budget.js";
import { formatRunBudget } from "../domain/spend/run-budget.js";
import { formatDuration } from "../domain/text/duration.js";
import { count } from "./render.js";

// How usage and cost read in `show`, `result` and `wait` (specs/cli.md): tokens as billed, the dollars
// with where they come from. Dollars are list prices: for someone who pays by subscription, an estimate.

/** " 20.3k tokens $0.0137 (claude-code's figure)": the end of a record's one-line summary. */
export function spendWords(r: RecordFile): string {
  const tokens = r.tokens.input + r.tokens.output;
  const words = tokens > 0 ? ` ${count(tokens)} tokens` : "";
  if (r.costUsd === null) return words;
  const source = r.costSource ?? "reported";
  return `${words} ${source === "priced" ? "~" : ""}${formatUsd(r.costUsd)} (${sourceWords(r, false)})`;
}

function sourceWords(r: RecordFile, long: boolean): string {
  if (r.costSource === "priced") {
    return long ? `catherd's estimate at list prices, ${r.pricedBy ?? "its price table"}` : "estimate";
  }
  return long ? `${r.backend}'s own figure` : `${r.backend}'s figure`;
}

/**
 * The usage lines of `show` and `result`: tokens in all (and by model when there are several), the cost
 * and its source, each cap of the spec against what was used, and a cap the usage crossed without a stop.
 */
export function spendLines(r: RecordFile, spec: SpecFile | null): string[] {
  const lines: string[] = [];
  const u = r.usage;
  const total = u?.input === undefined ? r.tokens.input + r.tokens.output : u.input + u.output;
  if (u !== undefined && total > 0) {
    lines.push(
      `usage: ${groupDigits(total)} tokens — input ${groupDigits(u.input)} (cached ${groupDigits(u.cachedInput)}, cache writes ${groupDigits(u.cacheWrite)}), output ${groupDigits(u.output)} (reasoning ${groupDigits(u.reasoning)})`,
    );
    if (u.models.length > 1) {
      for (const m of u.models) {
        const cost =
          m.costUsd === null ? "" : `, ${m.costSource === "priced" ? "~" : ""}${formatUsd(m.costUsd)}`;
        lines.push(`  ${m.model ?? "(unknown model)"}: ${groupDigits(m.input + m.output)} tokens${cost}`);
      }
    }
  } else if (total > 0) {
    lines.push(
      `usage: ${groupDigits(total)} tokens (input ${r.tokens.input}, cached ${r.tokens.cached}, output ${r.tokens.output})`,
    );
  }
  if (r.costUsd !== null) {
    lines.push(
      `cost: ${r.costSource === "priced" ? "~" : ""}${formatUsd(r.costUsd)}, ${sourceWords(r, true)} (an estimate if you pay by subscription)`,
    );
  } else if (total > 0) {
    lines.push("cost: unknown (no figure from the CLI, and no known price for its model)");
  }
  const capTokens = spec?.maxTokens ?? null;
  const capCost = spec?.maxCostUsd ?? null;
  if (capTokens !== null) lines.push(`cap: --max-tokens ${capTokens}, used ${groupDigits(total)}`);
  if (capCost !== null) {
    lines.push(
      `cap: --max-cost ${capCost}, used ${r.costUsd === null ? "an unknown amount" : formatUsd(r.costUsd)}`,
    );
  }
  const crossed = r.capCrossed ?? null;
  if (crossed !== null) {
    lines.push(
      `cap crossed: ${crossed.message}, reported with the CLI's final answer: nothing was stopped (the work was done)`,
    );
  }
  return lines;
}

/** "$0.12", "$3.40", "$0": dollars short enough for a table cell ("~" marks catherd's estimate). */
function shortUsd(usd: number): string {
  if (usd === 0) return "$0";
  if (usd < 0.01) return "<$0.01";
  return usd >= 100 ? `$${Math.round(usd)}` : `$${usd.toFixed(2)}`;
}

/** status's TOKENS cell: "41k", against its cap when it has one ("41k/50k"); "-" before any usage. */
export function tokensCell(spend: RowSpend | null): string {
  if (spend === null) return "-";
  const used = count(spend.tokens);
  return spend.maxTokens === null ? used : `${used}/${count(spend.maxTokens)}`;
}

/** status's COST cell: "$0.12", "~$0.12" (catherd's estimate), "$0.12/$5" against --max-cost; "-": none. */
export function costCell(spend: RowSpend | null): string {
  if (spend === null) return "-";
  const used =
    spend.costUsd === null ? "?" : `${spend.costSource === "priced" ? "~" : ""}${shortUsd(spend.costUsd)}`;
  // `?`: the dispatch has usage but no dollar figure (an unknown model); `-` is "no usage yet".
  if (spend.maxCostUsd !== null) return `${used}/${shortUsd(spend.maxCostUsd)}`;
  return used;
}

/**
 * status's header line for a run with a budget: what it spent against each limit, and whether it is
 * spent ("run nightly budget: 412k of 2M tokens, $3.20 of $25, 1h05m of 10h — 3 live"), the live ones
 * being `spend.live` (which `status` counts from its rows).
 */
export function budgetLine(view: RunBudgetView, run: string): string {
  const { budget, spend } = view;
  const parts: string[] = [];
  if (budget.tokens !== null) parts.push(`${count(spend.tokens)} of ${count(budget.tokens)} tokens`);
  else parts.push(`${count(spend.tokens)} tokens`);
  const floor = spend.unpriced > 0 ? "≥ " : "";
  if (budget.usd !== null) parts.push(`${floor}${formatUsd(spend.costUsd)} of ${formatUsd(budget.usd)}`);
  else if (spend.costUsd > 0) parts.push(`${floor}${formatUsd(spend.costUsd)}`);
  if (budget.minutes !== null) {
    parts.push(`${formatDuration(view.elapsedMs)} of ${formatDuration(budget.minutes * 60_000)}`);
  }
  const state = view.spent === null ? `${spend.live} live` : "SPENT: admits nothing, starts nothing queued";
  const unpriced = spend.unpriced > 0 ? ` (${spend.unpriced} without a dollar figure)` : "";
  return `run ${run} budget (--run-budget ${formatRunBudget(budget)}): ${parts.join(", ")}${unpriced} — ${state}\n`;
}
