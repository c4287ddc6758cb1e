import type { Clock } from "./clock.js";
import { watchFolder } from "./folder-watch.js";

// The one way catherd waits for something outside itself (a file to appear, a lock to come free, a
// process to go): a check run again and again on the injected clock, until it answers or a deadline on
// the monotonic clock passes, woken early by a file-system watch where one is given.

/** Starts listening for changes that may have answered the check; returns how to stop listening. */
export type WakeSource = (wake: () => void) => () => void;

export interface WaitOptions {
  clock: Clock;
  /** The wait gives up once `clock.now()` reaches this (monotonic ms); Infinity waits for ever. */
  deadline: number;
  /**
   * How long to sleep between checks when nothing wakes the wait: a number of ms, or a schedule given the
   * number of sleeps so far (a back-off). Sleeps never overshoot the deadline.
   */
  pollMs: number | ((sleeps: number) => number);
  /**
   * What cuts a sleep short (`watchFolders`). The poll goes on with or without it: it is the fallback
   * where the watch cannot be set up (no inotify, its limit reached) or misses a change (NFS, FUSE).
   */
  watch?: WakeSource;
  /** Abandons the wait: once it aborts, the wait resolves to undefined at once (its sleep cut short). */
  signal?: AbortSignal;
}

/**
 * Runs `check` until it answers (returns anything but undefined) and resolves to that answer; resolves to
 * undefined once the deadline has passed with no answer. The check runs at least once, and once more at
 * the deadline, so that a wait never gives up on an answer that came during its last sleep. A change
 * reported while the check runs makes the next check come at once. A throw from the check ends the wait
 * with that throw; an aborted `signal` ends it with undefined; the watch is closed on every path.
 */
export async function waitUntil<T>(
  check: () => T | undefined | Promise<T | undefined>,
  options: WaitOptions,
): Promise<T | undefined> {
  const { clock, deadline, pollMs } = options;
  let changed = false;
  let cutSleep: AbortController | null = null;
  const stopWatching = options.watch?.(() => {
    changed = true;
    cutSleep?.abort();
  });
  const abandon = () => cutSleep?.abort();
  const abandoned = () => options.signal?.aborted === true;
  options.signal?.addEventListener("abort", abandon);
  try {
    for (let sleeps = 0; ; ) {
      if (abandoned()) return undefined;
      changed = false;
      const answer = await check();
      if (answer !== undefined) return answer;
      const now = clock.now();
      if (now >= deadline || abandoned()) return undefined;
      if (changed) continue;
      const poll = typeof pollMs === "number" ? pollMs : pollMs(sleeps);
      cutSleep = new AbortController();
      await clock.sleep(Math.min(poll, deadline - now), cutSleep.signal);
      cutSleep = null;
      sleeps += 1;
    }
  } finally {
    options.signal?.removeEventListener("abort", abandon);
    stopWatching?.();
  }
}

/**
 * Wakes a wait when an entry of one of `dirs` is created, renamed, changed or removed (fs.watch: inotify
 * on Linux); with `names`, only for those entries (a platform that does not name the entry wakes it
 * anyway). A folder that cannot be watched is left to the poll.
 */
export function watchFolders(dirs: readonly string[], names?: readonly string[]): WakeSource {
  return (wake) => {
    // A folder that cannot be watched, or whose watch breaks, is left to the poll.
    const watches = dirs.map((dir) => watchFolder(dir, names ?? (() => true), wake));
    return () => {
      for (const watch of watches) watch?.close();
    };
  };
}

/** Wakes a wait when `emitter` emits any of `events` (a stream's data or end, a child's exit). */
export function wakeOnEvents(emitter: NodeJS.EventEmitter, events: readonly string[]): WakeSource {
  return (wake) => {
    for (const event of events) emitter.on(event, wake);
    return () => {
      for (const event of events) emitter.off(event, wake);
    };
  };
}

/** Wakes a wait when `promise` settles, either way. */
export function wakeWhenSettled(promise: Promise<unknown>): WakeSource {
  return (wake) => {
    let listening = true;
    promise.then(
      () => listening && wake(),
      () => listening && wake(),
    );
    return () => {
      listening = false;
    };
  };
}
