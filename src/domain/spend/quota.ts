// A CLI's subscription and rate-limit windows, as a dispatch saw them (specs/dispatch-folder.md,
// quota.json): each window of a limit — how much of it is used, how long it is, when it resets. The CLIs
// report them in their own units and sparsely (codex's app-server sends a window as null when it has no
// news of it); a window read here is in one unit, and a report that says nothing of a window keeps
// what was known of it.

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

/** A name cut to its bound. */
export function quotaName(value: string): string {
  return value.length > QUOTA_NAME_CHARS ? value.slice(0, QUOTA_NAME_CHARS) : value;
}

const key = (w: QuotaWindow) => `${w.limit}\u0000${w.window}`;

/**
 * What is known after a report: each reported window replaces the one kept under the same limit and
 * window (a figure it leaves null keeps the kept one's: reports are sparse), stamped `seenAt`; at most
 * MAX_WINDOWS are kept (a report of a new window past it is dropped). Returns null when the report
 * named no window that could be kept.
 */
export function mergeWindows(
  kept: readonly SeenWindow[],
  reported: readonly QuotaWindow[],
  seenAt: string,
): SeenWindow[] | null {
  const next = new Map(kept.map((w) => [key(w), w]));
  let changed = false;
  for (const w of reported) {
    const old = next.get(key(w));
    if (old === undefined && next.size >= MAX_WINDOWS) continue;
    const merged: SeenWindow = {
      limit: w.limit,
      window: w.window,
      usedPercent: w.usedPercent ?? old?.usedPercent ?? null,
      windowMinutes: w.windowMinutes ?? old?.windowMinutes ?? null,
      resetsAt: w.resetsAt ?? old?.resetsAt ?? null,
      seenAt,
    };
    next.set(key(w), merged);
    changed = true;
  }
  return changed ? [...next.values()] : null;
}
