import { formatDuration } from "../../domain/text/duration.js";
import { readLockReports } from "../../folder/lock-reports.js";

// What a dispatch's `catherd lock`s are doing, for `status`, `show` and `wait` (specs/lock.md, "Inside a
// dispatch"): read from their reports in the folder, each checked alive by pid and start time. The one
// place the verbs read them: a reader gate taking over the verbs' reads needs only call this.

/** A lock of the dispatch's agent: waiting for a slot of `class`, or running `command` in one. */
export interface LockActivity {
  class: string;
  state: "waiting" | "running";
  command: string;
  /** When it began to wait, or took its slot (ISO). */
  since: string;
  /** Live waiters before it (waiting), else null. */
  ahead: number | null;
}

/**
 * The most telling lock of the dispatch in `dir`: the one running longest, else the waiter nearest its
 * turn; null when none lives.
 */
export function lockActivityOf(dir: string): LockActivity | null {
  const reports = readLockReports(dir).live.map(({ report: r }) => ({
    class: r.class,
    state: r.state,
    command: r.label,
    since: r.since,
    ahead: r.state === "waiting" ? r.ahead : null,
  }));
  const running = reports.filter((r) => r.state === "running").sort((a, b) => (a.since < b.since ? -1 : 1));
  if (running[0] !== undefined) return running[0];
  return reports.sort((a, b) => (a.ahead ?? 0) - (b.ahead ?? 0))[0] ?? null;
}

/** "waiting for a heavy slot (3 ahead)", "waiting for a heavy slot (next)", "running a heavy command: npm test, 2m10s". */
export function lockActivityText(activity: LockActivity, nowMs: number): string {
  if (activity.state === "waiting") {
    const place = activity.ahead === null || activity.ahead === 0 ? "next" : `${activity.ahead} ahead`;
    return `waiting for a ${activity.class} slot (${place})`;
  }
  const since = Date.parse(activity.since);
  const secs = Number.isFinite(since) ? `, ${formatDuration(Math.max(0, nowMs - since))}` : "";
  return `running a ${activity.class} command: ${activity.command}${secs}`;
}

/**
 * The same in `status`'s narrow last column, in the form of its "tool open 3m12s: cargo build": "heavy
 * slot: 3 ahead", "heavy slot: next", "heavy 2m10s: npm test".
 */
export function lockActivityCell(activity: LockActivity, nowMs: number): string {
  if (activity.state === "waiting") {
    const place = activity.ahead === null || activity.ahead === 0 ? "next" : `${activity.ahead} ahead`;
    return `${activity.class} slot: ${place}`;
  }
  const since = Date.parse(activity.since);
  const secs = Number.isFinite(since) ? ` ${formatDuration(Math.max(0, nowMs - since))}` : "";
  return `${activity.class}${secs}: ${activity.command}`;
}
