// Time measured across processes (specs/supervisor.md, "Clocks"): an adopter counts the wall limit from
// the agent's start, and exit.json's duration from the first supervisor's, instants another process
// recorded. The wall clock cannot carry them: a jump of it between the record and the reading (NTP, a
// person's `date -s`, a host whose clock is set wrong) would fire a timeout at once or postpone it. The
// monotonic clock every process of one boot shares (Linux's CLOCK_MONOTONIC, counted from boot) does not
// jump; a reboot restarts it, which the boot id tells.

/** A reading of the boot-wide monotonic clock: ms since boot, and which boot (null: the platform has no id). */
export interface BootStamp {
  bootId: string | null;
  ms: number;
}

/** An instant another process recorded: on the wall clock (ms since the epoch) and, when it did, on the boot's. */
export interface Recorded {
  wallMs: number;
  boot: BootStamp | null;
}

/** Why an elapsed time came from the wall clock: no boot reading to compare, or one of another boot. */
export type WallFallback = "no-boot-stamp" | "no-boot-id" | "another-boot";

/** How long ago a recorded instant was, and from which clock: never negative. */
export type Elapsed = { ms: number; clock: "boot" } | { ms: number; clock: "wall"; why: WallFallback };

/**
 * How long before `now` the instant `then` was. From the boot clock when both readings are of one boot
 * (same boot id, neither null): a jump of the wall clock does not move it. Otherwise from the wall
 * clock, saying why; a wall clock that went back since gives 0, never a negative time.
 */
export function elapsedSince(then: Recorded, now: { wallMs: number; boot: BootStamp }): Elapsed {
  const fallback = (why: WallFallback): Elapsed => ({
    ms: Math.max(0, now.wallMs - then.wallMs),
    clock: "wall",
    why,
  });
  if (then.boot === null) return fallback("no-boot-stamp");
  if (then.boot.bootId === null || now.boot.bootId === null) return fallback("no-boot-id");
  if (then.boot.bootId !== now.boot.bootId) return fallback("another-boot");
  return { ms: Math.max(0, now.boot.ms - then.boot.ms), clock: "boot" };
}

/**
 * How long ago a file was written, from its mtime (the kernel's wall clock at the write) and the wall
 * clock now: nothing records the boot clock at the agent's writes. `wallShiftMs` is how far the wall
 * clock moved against the boot clock since the agent's start (0 when unknown): a jump came before or
 * after the write, so the age is one of the two readings, and the smaller is taken — the quiet clock
 * never runs ahead of the truth; at worst it restarts at the adoption. Never negative.
 */
export function ageOfWrite(mtimeMs: number, wallNowMs: number, wallShiftMs: number): number {
  const asRead = wallNowMs - mtimeMs;
  return Math.max(0, Math.min(asRead, asRead - wallShiftMs));
}

/**
 * How far the wall clock moved against the boot clock between `then` and now: 0 for clocks in step
 * (whatever the time between), the size of a jump otherwise; null when the two readings are not of one
 * boot.
 */
export function wallShiftSince(then: Recorded, now: { wallMs: number; boot: BootStamp }): number | null {
  const elapsed = elapsedSince(then, now);
  if (elapsed.clock !== "boot") return null;
  return now.wallMs - then.wallMs - elapsed.ms;
}
