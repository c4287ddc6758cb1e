import { isSpent, type SeenWindow } from "../spend/quota.js";

// Whether an account may take work now, judged from the windows its CLI last reported (specs/quota.md,
// "When an account is out of window"). Pure: the caller reads the account's state from the home and gives
// the time.

/** A window as an account's state keeps it: what a dispatch saw, and which dispatch saw it last. */
export interface AccountWindow extends SeenWindow {
  /** The dispatch whose CLI reported it last (its id), or null. */
  by?: string | null | undefined;
}

/** `--window-headroom` when none is given: the last 5 % of a window is kept for people. */
export const DEFAULT_HEADROOM_PERCENT = 95;
/**
 * How long a spent window whose reset nobody reported holds its account: then one dispatch is tried, and
 * what its CLI reports (or how it ends) decides again.
 */
export const UNKNOWN_RESET_HOLD_MS = 60 * 60_000;

/**
 * What an account's windows allow now:
 * - `open`: nothing holds it;
 * - `held`: a window is spent (rejected, or used `headroom` % or more) until `until` (ms), the latest
 *   reset among the spent ones (every one of them must have reset); `window` names the one that frees last;
 * - `probe`: a window was spent and its reset has passed, but no report since says it really reset (a CLI's
 *   reset time can be hours off): one dispatch may run on the account, and what it sees decides again.
 */
export type AccountGate =
  | { state: "open" }
  | { state: "probe"; window: AccountWindow }
  | { state: "held"; until: number; window: AccountWindow };

/** When a spent window frees: its reset, else an hour after it was seen (ms; NaN for a bad time). */
export function freesAt(w: AccountWindow): number {
  if (w.resetsAt !== null) return Date.parse(w.resetsAt);
  return Date.parse(w.seenAt) + UNKNOWN_RESET_HOLD_MS;
}

/** The gate of an account whose windows are `windows`, at `nowMs`, keeping `headroomPercent` back. */
export function accountGate(
  windows: readonly AccountWindow[],
  headroomPercent: number,
  nowMs: number,
): AccountGate {
  let held: { until: number; window: AccountWindow } | null = null;
  let probe: AccountWindow | null = null;
  for (const w of windows) {
    if (!isSpent(w, headroomPercent)) continue;
    const frees = freesAt(w);
    if (!Number.isFinite(frees)) continue;
    if (frees > nowMs) {
      if (held === null || frees > held.until) held = { until: frees, window: w };
    } else if (!newsSince(windows, frees, headroomPercent)) {
      probe ??= w;
    }
  }
  if (held !== null) return { state: "held", ...held };
  return probe === null ? { state: "open" } : { state: "probe", window: probe };
}

/**
 * Whether a report since `sinceMs` says the account serves: a window seen after it that is not spent (its
 * CLI answered, so the reset was real).
 */
function newsSince(windows: readonly AccountWindow[], sinceMs: number, headroomPercent: number): boolean {
  return windows.some((w) => Date.parse(w.seenAt) > sinceMs && !isSpent(w, headroomPercent));
}

/** The window catherd keeps of how an account's dispatches ended (see `endingWindow`). */
export const ENDING_WINDOW = { limit: "catherd", window: "ending" } as const;

/** How a dispatch on an account ended, as the window of its ending weighs it. */
export interface AccountEnding {
  /** Its error's kind (record.json `error.kind`), null when it ended without one. */
  kind: string | null;
  /** When it may come back (record.json `error.retryAfter`), null when not said. */
  retryAfter: string | null;
  startedAt: string | null;
  endedAt: string;
}

/**
 * The window a dispatch's ending says of its account, for CLIs that report no window or that end before
 * they do: stopped by a quota, or by a rate limit with a time to come back, it is spent (`rejected`) until
 * that time (a quota with none: `UNKNOWN_RESET_HOLD_MS`), seen when it ended; any other ending says the
 * account served it, seen when it started — so that only a dispatch that started after a wall was hit,
 * and was not stopped by it, says the wall is gone. Null: the ending says nothing (a rate limit with no
 * time, or a dispatch that never started).
 */
export function endingWindow(ending: AccountEnding): AccountWindow | null {
  const stopped = ending.kind === "quota" || (ending.kind === "rate-limit" && ending.retryAfter !== null);
  const base = { ...ENDING_WINDOW, usedPercent: null, windowMinutes: null };
  if (stopped) return { ...base, status: "rejected", resetsAt: ending.retryAfter, seenAt: ending.endedAt };
  if (ending.kind === "rate-limit" || ending.startedAt === null) return null;
  return { ...base, status: "allowed", resetsAt: null, seenAt: ending.startedAt };
}

/** An account of a pool as the pick sees it: its gate, its live dispatches, its soonest reset. */
export interface PoolMember {
  name: string;
  gate: AccountGate;
  /** Live dispatches on it now (a probing account takes one at a time). */
  live: number;
  /** The soonest reset among its windows that are not over (ms), null when none is known. */
  soonestReset: number | null;
}

/**
 * The account a dispatch runs on: among those that may take it now (open, or probing with nothing live),
 * the one whose window resets soonest, since what it has left is lost at its reset (one with no known
 * reset comes last; a tie goes by name). None may: null, with when the first of them frees (null when
 * none will by itself: a probing account is busy, and frees when its dispatch ends).
 */
export function pickAccount(
  pool: readonly PoolMember[],
): { account: string } | { account: null; until: number | null; window: AccountWindow | null } {
  const ready = pool.filter((m) => m.gate.state === "open" || (m.gate.state === "probe" && m.live === 0));
  if (ready.length > 0) {
    const order = (m: PoolMember) => m.soonestReset ?? Number.POSITIVE_INFINITY;
    const best = [...ready].sort((a, b) => order(a) - order(b) || a.name.localeCompare(b.name))[0];
    return { account: best?.name ?? "" };
  }
  let first: { until: number; window: AccountWindow } | null = null;
  for (const m of pool) {
    if (m.gate.state !== "held") continue;
    if (first === null || m.gate.until < first.until) first = { until: m.gate.until, window: m.gate.window };
  }
  return { account: null, until: first?.until ?? null, window: first?.window ?? null };
}

/** The soonest reset, after `nowMs`, among `windows` (ms), or null: what the pick drains first by. */
export function soonestReset(windows: readonly AccountWindow[], nowMs: number): number | null {
  let soonest: number | null = null;
  for (const w of windows) {
    const at = w.resetsAt === null ? Number.NaN : Date.parse(w.resetsAt);
    if (Number.isFinite(at) && at > nowMs && (soonest === null || at < soonest)) soonest = at;
  }
  return soonest;
}
