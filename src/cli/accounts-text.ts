import type { AccountView } from "../dispatch/accounts-view.js";
import type { AccountWindow } from "../domain/quota/gate.js";
import { paint } from "./render.js";

// The home's accounts in words (specs/quota.md): `catherd account list`, and `usage --by account` after
// its table.

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
