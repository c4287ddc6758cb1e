import type { AccountView } from "../dispatch/accounts-view.js";
import type { BudgetView } from "../dispatch/budgets-view.js";
import { measureText } from "../dispatch/read/queue-text.js";
import type { AccountWindow } from "../domain/quota/gate.js";
import { localMinute } from "../domain/quota/period.js";
import { BUDGET_MEASURES } from "../domain/quota/period-budget.js";
import { formatUsd, groupDigits } from "../domain/spend/budget.js";
import { calendarShiftMs } from "../quota/budgets.js";
import { paint } from "./render.js";

// The home's quota in words (specs/quota.md): its accounts (`catherd account list`, `usage --by account`
// after its table) and its budgets by period (`catherd budget list`, `usage` above its table).

/** One block per account: its name and folder, whether it takes work, then a line per window. */
export function renderAccounts(accounts: readonly AccountView[], nowMs: number): string {
  if (accounts.length === 0) return "no accounts declared and no window reported yet (catherd account add)\n";
  const lines: string[] = [];
  for (const a of accounts) {
    const gate =
      a.gate.state === "open"
        ? paint("takes work", "green")
        : a.gate.state === "probe"
          ? paint("one dispatch at a time until its reset is confirmed", "yellow")
          : paint(`out of window until ${new Date(a.gate.until).toISOString().slice(0, 16)}Z`, "red");
    const waits = a.waiting === 0 ? "" : `, ${a.waiting} waiting`;
    lines.push(`${a.backend} ${a.name} (${a.dir ?? "the environment's own"}): ${gate}${waits}`);
    for (const w of a.windows) lines.push(`  ${windowLine(w, nowMs)}`);
  }
  return `${lines.join("\n")}\n`;
}

/** "codex/primary 42% of 300 min, resets 2026-12-07 05:00Z, seen 12 min ago". */
function windowLine(w: AccountWindow, nowMs: number): string {
  const name = w.limit === "" ? w.window : `${w.limit}/${w.window}`;
  const used = w.usedPercent === null ? (w.status ?? "no figure") : `${Math.round(w.usedPercent)}%`;
  const length = w.windowMinutes === null ? "" : ` of ${w.windowMinutes} min`;
  const resets =
    w.resetsAt === null ? "" : `, resets ${w.resetsAt.slice(0, 10)} ${w.resetsAt.slice(11, 16)}Z`;
  const ago = Math.max(0, Math.round((nowMs - Date.parse(w.seenAt)) / 60_000));
  const status = w.status === "rejected" ? " (rejected)" : "";
  return `${name} ${used}${length}${status}${resets}, seen ${ago} min ago`;
}

/** One line per budget: "home per day: $3.20 of $5.00 ($1.80 left); renews 2026-12-07 00:00". */
export function renderBudgets(budgets: readonly BudgetView[]): string {
  if (budgets.length === 0) return "no budgets set (catherd budget set)\n";
  return `${budgets.map(periodBudgetLine).join("\n")}\n`;
}

/** A budget's line, as `budget list` and `usage` print it. */
export function periodBudgetLine(b: BudgetView): string {
  const parts = BUDGET_MEASURES.flatMap((m) => {
    const limit = b[m];
    if (limit === null) return [];
    const left = b.left[m] ?? 0;
    const leftText = m === "usd" ? formatUsd(left) : groupDigits(Math.floor(left));
    return [`${measureText(m, b.used[m], limit)} (${leftText} left)`];
  });
  const renews = localMinute(Date.parse(b.renews), calendarShiftMs());
  const spent = b.spent === null ? "" : paint(" — spent: new work it covers waits", "red");
  return `budget ${b.scope} per ${b.per}: ${parts.join(", ")}; renews ${renews}${spent}`;
}
