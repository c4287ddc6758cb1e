// When the watch loop looks again (specs/supervisor.md, "The loop"): each of its sensors, and the rules,
// say when they next need a look; the loop sleeps until the earliest. Pure: times are monotonic ms.

/** A floor under every sleep, so that no slip in the arithmetic of next looks can make the loop spin. */
export const MIN_SLEEP_MS = 5;

/**
 * A ceiling on every sleep: while nothing moves the loop still looks this often, for the changes inotify
 * cannot see (another machine's writes to a shared file system: a cancel written from there).
 */
export const QUIET_POLL_MS = 30_000;

/**
 * How long the loop sleeps at `now`: until the earliest of `nextLooks` (Infinity: that one needs no look
 * of its own; NaN is no time and is ignored), at least MIN_SLEEP_MS and at most QUIET_POLL_MS.
 */
export function sleepFor(nextLooks: readonly number[], now: number): number {
  let earliest = Number.POSITIVE_INFINITY;
  for (const at of nextLooks) if (at < earliest) earliest = at;
  return Math.min(QUIET_POLL_MS, Math.max(MIN_SLEEP_MS, earliest - now));
}
