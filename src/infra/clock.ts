import type { BootStamp } from "../domain/watch/boot-clock.js";
import { hostIdentity } from "./host-identity.js";

/**
 * Time as catherd uses it: a monotonic `now()` (ms) for every duration, the wall clock only for
 * timestamps. The system's `now()` is the monotonic clock every process of one boot shares, counted
 * from boot (process.hrtime: Linux's CLOCK_MONOTONIC, macOS's mach time), so a reading recorded by one
 * process — with the boot id, `bootStamp` — measures time in another (src/domain/watch/boot-clock.ts).
 */
export interface Clock {
  now(): number;
  wallNow(): Date;
  /** Resolves after `ms`, or as soon as `signal` aborts (never rejects; clears its timer either way). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Number(process.hrtime.bigint()) / 1e6,
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

/** `clock.now()` with this host's boot id: a reading another process of the same boot can compare. */
export function bootStamp(clock: Clock): BootStamp {
  return { bootId: hostIdentity().bootId, ms: clock.now() };
}
