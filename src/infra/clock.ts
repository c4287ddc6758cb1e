/** Time as catherd uses it: a monotonic `now()` (ms) for every duration, the wall clock only for timestamps. */
export interface Clock {
  now(): number;
  wallNow(): Date;
  /** Resolves after `ms`, or as soon as `signal` aborts (never rejects; clears its timer either way). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  wallNow: () => new Date(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted === true) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
    }),
};
