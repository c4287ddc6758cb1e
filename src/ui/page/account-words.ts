import type { AccountWindowWire, AccountWire } from "../wire.js";
import { duration, since } from "./format.js";

// An account in words, as the runs page shows it (specs/ui.md, "Accounts") and as `catherd account list`
// says it. Pure: no DOM.

/** An ISO time to the minute in UTC, as `status` writes a reset: "2026-12-07 05:00Z"; "–" for none. */
export function utcMinute(iso: string | null): string {
  if (iso === null || !Number.isFinite(Date.parse(iso))) return "–";
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}Z`;
}

/**
 * Whether it takes work now: "takes work", "one dispatch at a time until its reset is confirmed
 * (claude/five_hour)", "out of window until 2026-12-07 05:00Z (claude/five_hour)".
 */
export function gateWords(gate: AccountWire["gate"]): string {
  if (gate.state === "open") return "takes work";
  if (gate.state === "probe") return `one dispatch at a time until its reset is confirmed (${gate.window})`;
  return `out of window until ${utcMinute(gate.until)} (${gate.window})`;
}

/** The cells of a window's row: used, length, resets, status, seen. */
export function windowCells(w: AccountWindowWire, now: number): string[] {
  const used = w.usedPercent === null ? "no figure" : `${Math.round(w.usedPercent)}%`;
  const length = w.windowMinutes === null ? "–" : duration(w.windowMinutes * 60_000);
  const resetMs = w.resetsAt === null ? Number.NaN : Date.parse(w.resetsAt);
  const resets =
    w.resetsAt === null
      ? "–"
      : `${utcMinute(w.resetsAt)}${resetMs > now ? ` (in ${duration(resetMs - now)})` : " (passed)"}`;
  return [used, length, resets, w.status ?? "–", `${since(w.seenAt, now)} ago`];
}

/** "2 waiting" (+ "(+3 more not listed)" past the parked dispatches listed); null when none waits. */
export function waitingWords(a: Pick<AccountWire, "waiting" | "parked">): string | null {
  if (a.waiting === 0) return null;
  const more = a.waiting - a.parked.length;
  return `${a.waiting} waiting${more > 0 ? ` (+${more} more not listed)` : ""}`;
}
