// A CLI's subscription and rate-limit windows, as a dispatch saw them (specs/dispatch-folder.md,
// quota.json): each window of a limit — how much of it is used, how long it is, when it resets. The CLIs
// report them in their own units and sparsely (codex's app-server sends a window as null when it has no
// news of it); a window read here is in one unit, and a report that says nothing of a window keeps
// what was known of it. A window the CLI says is refused (`rejected`) is spent, whatever its figures.

/** What the CLI said of a window: it serves, it warns (a threshold passed), it refuses. */
export const WINDOW_STATUSES = ["allowed", "warning", "rejected"] as const;
export type WindowStatus = (typeof WINDOW_STATUSES)[number];

/** One window of a provider's limit, normalized: percent 0–100, minutes, an ISO reset time. */
export interface QuotaWindow {
  /** The provider's name for the limit ("codex"); "" when it names none. */
  limit: string;
  /** Which window of it ("primary", "secondary", "five_hour"…). */
  window: string;
  /** How much of the window is used, in percent; null when the CLI said nothing of it (not 0 %). */
  usedPercent: number | null;
  windowMinutes: number | null;
  /** When the window resets (ISO); null when unknown. */
  resetsAt: string | null;
  /** What the CLI said of it; null when it said nothing (codex reports figures only). */
  status: WindowStatus | null;
}

/** A window as kept in quota.json: with when it was last reported (ISO, the supervisor's wall clock). */
export interface SeenWindow extends QuotaWindow {
  seenAt: string;
}

/** The most windows a dispatch keeps: a CLI naming more is not reporting windows any more. */
export const MAX_WINDOWS = 16;
/** Names longer than this are cut: they are labels, never keys a CLI could grow without bound. */
export const QUOTA_NAME_CHARS = 64;
/** Reset times outside these Unix seconds (2001 to 3000) are not times: a unit mistaken, or noise. */
const RESET_RANGE_S = [1_000_000_000, 32_503_680_000] as const;

/** A percentage as reported, if it is one: a finite number from 0 to 100. */
export function percentOf(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 100 ? value : null;
}

/** Minutes as reported, if they are a window's length: a positive whole number up to a year. */
export function minutesOf(value: unknown): number | null {
  const ok = typeof value === "number" && Number.isInteger(value) && value > 0 && value <= 366 * 24 * 60;
  return ok ? value : null;
}

/** A reset time given in Unix seconds, as ISO; null for anything that is not such a time. */
export function resetFromSeconds(value: unknown): string | null {
  if (typeof value !== "number" || !Number.isFinite(value)) return null;
  if (value < RESET_RANGE_S[0] || value >= RESET_RANGE_S[1]) return null;
  return new Date(Math.round(value * 1000)).toISOString();
}

/**
 * A used share as a percent, from a figure given as a fraction or a percent: up to 1 it is a fraction (0.91
 * → 91 %; Claude's `utilization`), above 1 and up to 100 a percent (a port that prints 82). A share of
 * exactly 1 reads 100 %, never 1 %: the CLIs that give fractions reach 1 at a spent window.
 */
export function shareOf(value: unknown): number | null {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 100) return null;
  return value <= 1 ? Math.round(value * 100 * 1e6) / 1e6 : value;
}

/** Reset times at or above this are in milliseconds (seconds would be past the year 3000). */
const MS_FROM = RESET_RANGE_S[1];

/** A reset time in Unix seconds or milliseconds, told apart by magnitude, as ISO; null when it is neither. */
export function resetFromEpoch(value: unknown): string | null {
  if (typeof value === "number" && value >= MS_FROM) return resetFromSeconds(value / 1000);
  return resetFromSeconds(value);
}

/**
 * Whether a window is spent: refused by the CLI, or used to its end — or, given a headroom (`--window-
 * headroom`, specs/quota.md), used that many percent or more.
 */
export function isSpent(w: QuotaWindow, headroomPercent = 100): boolean {
  return w.status === "rejected" || (w.usedPercent !== null && w.usedPercent >= headroomPercent);
}

/**
 * When work may come back for the spent windows among `windows`: the latest of their resets (every spent
 * window must have reset), as ISO; null when none is spent, or a spent one names no reset.
 */
export function spentUntil(windows: readonly QuotaWindow[]): string | null {
  const spent = windows.filter((w) => isSpent(w));
  if (spent.length === 0 || spent.some((w) => w.resetsAt === null)) return null;
  return spent.map((w) => w.resetsAt as string).reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a));
}

/** A name cut to its bound. */
export function quotaName(value: string): string {
  return value.length > QUOTA_NAME_CHARS ? value.slice(0, QUOTA_NAME_CHARS) : value;
}

const key = (w: QuotaWindow) => `${w.limit}\u0000${w.window}`;

/**
 * What is known after a report: each reported window replaces the one kept under the same limit and
 * window (a figure or status it leaves null keeps the kept one's: reports are sparse), stamped `seenAt`;
 * at most MAX_WINDOWS are kept (a report of a new window past it is dropped). Returns null when the
 * report named no window that could be kept.
 */
export function mergeWindows(
  kept: readonly SeenWindow[],
  reported: readonly QuotaWindow[],
  seenAt: string,
): SeenWindow[] | null {
  return mergeInto(kept, reported, (w) => ({ ...w, seenAt }));
}

/** The windows after a report, merged as mergeWindows does, without a time: what a stream's summary keeps. */
export function foldWindows(kept: readonly QuotaWindow[], reported: readonly QuotaWindow[]): QuotaWindow[] {
  return mergeInto(kept, reported, (w) => w) ?? [...kept];
}

function mergeInto<T extends QuotaWindow>(
  kept: readonly T[],
  reported: readonly QuotaWindow[],
  make: (w: QuotaWindow) => T,
): T[] | null {
  const next = new Map(kept.map((w) => [key(w), w]));
  let changed = false;
  for (const w of reported) {
    const old = next.get(key(w));
    if (old === undefined && next.size >= MAX_WINDOWS) continue;
    next.set(
      key(w),
      make({
        limit: w.limit,
        window: w.window,
        usedPercent: w.usedPercent ?? old?.usedPercent ?? null,
        windowMinutes: w.windowMinutes ?? old?.windowMinutes ?? null,
        resetsAt: w.resetsAt ?? old?.resetsAt ?? null,
        status: w.status ?? old?.status ?? null,
      }),
    );
    changed = true;
  }
  return changed ? [...next.values()] : null;
}
