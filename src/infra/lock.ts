import * as fs from "node:fs";
import lockfile from "proper-lockfile";
import { CatherdError } from "../domain/errors.js";
import { DIR_MODE } from "./atomic.js";
import { type Clock, systemClock } from "./clock.js";
import { waitUntil } from "./wait-until.js";

// Locks are proper-lockfile's: a directory created atomically, its mtime refreshed while held, taken over
// once stale (its holder died or froze past `staleMs`).

export type Release = () => Promise<void>;

export interface LockOptions {
  /** The lock directory (e.g. <run>/admission.lock). */
  lockPath: string;
  staleMs: number;
  /** Called when the lock was taken over while held (the holder froze past staleMs). Never throws. */
  onCompromised?: (error: Error) => void;
}

type Callback = (error: Error | null, value?: unknown) => void;

/** A node-style async method answered by its synchronous twin, the callback called before returning. */
function answeredNow<A extends unknown[]>(method: (...args: A) => unknown) {
  return (...args: [...A, Callback]) => {
    const callback = args.pop() as Callback;
    let value: unknown;
    try {
      value = method(...(args as unknown as A));
    } catch (error) {
      callback(error as Error);
      return;
    }
    callback(null, value);
  };
}

/**
 * proper-lockfile's file system, answered synchronously, as its own lockSync does. A lock is a handful of
 * calls, and the refresh of a held lock (stat, then utimes) becomes two syscalls on the main thread
 * instead of two trips through libuv's thread pool, each of which wakes pool threads: the largest CPU cost
 * of a quiet supervisor (specs/performance.md, "Cheap, rare lock refreshes"). One object for the process:
 * proper-lockfile caches the mtime precision it probed on it.
 */
const SYNC_FS = {
  ...fs,
  mkdir: answeredNow(fs.mkdirSync),
  realpath: answeredNow(fs.realpathSync),
  stat: answeredNow(fs.statSync),
  rmdir: answeredNow(fs.rmdirSync),
  utimes: answeredNow(fs.utimesSync),
};

function baseOptions(options: LockOptions) {
  return {
    fs: SYNC_FS,
    lockfilePath: options.lockPath,
    realpath: false,
    stale: options.staleMs,
    // proper-lockfile's own ratio. Each refresh wakes the holder (a supervisor holds its lock for hours),
    // and a holder late by more than `stale` - `update` only logs a compromised lock, it keeps working.
    update: Math.max(1000, Math.floor(options.staleMs / 2)),
    onCompromised: options.onCompromised ?? (() => {}),
  };
}

/**
 * Takes the lock if free; null when another live holder has it. The lock is known to proper-lockfile by
 * its own path: proper-lockfile keeps one held lock per path it is given, so two locks of one folder held
 * by one process (a run's admission.lock and its spend.lock; an adopter's adopt.lock and supervisor.lock)
 * named by the folder would share one entry, and releasing the inner would leave the outer's directory
 * behind, for every later taker to wait out until it is stale.
 */
export async function tryLock(options: LockOptions): Promise<Release | null> {
  try {
    const release = await lockfile.lock(options.lockPath, { ...baseOptions(options), retries: 0 });
    // proper-lockfile makes its directory under the umask; catherd's folders are 0700 whatever the umask.
    try {
      fs.chmodSync(options.lockPath, DIR_MODE);
    } catch {
      // taken over or gone already: the holder finds out through onCompromised
    }
    return release;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOCKED") return null;
    throw error;
  }
}

/** However busy a lock, nobody waits for it longer than this many times `waitMs`. */
const LOCK_WAIT_CAP_FACTOR = 10;
const LOCK_POLL_FIRST_MS = 5;
const LOCK_POLL_MAX_MS = 100;

/**
 * Waits for the lock while it changes hands — a queue of dispatchers on a busy machine is progress — but
 * no longer than `waitMs` behind any one holder (and `waitMs` × 10 in all); then E_IO_LOCK naming the lock.
 */
export async function lockWithin(options: LockOptions & { waitMs: number; clock?: Clock }): Promise<Release> {
  const clock = options.clock ?? systemClock;
  let holder = holderOf(options.lockPath);
  let heldSince = clock.now();
  const release = await waitUntil(
    async () => {
      const taken = await tryLock(options);
      if (taken !== null) return taken;
      const current = holderOf(options.lockPath);
      if (current !== holder) {
        holder = current;
        heldSince = clock.now();
      }
      if (clock.now() - heldSince >= options.waitMs) throw lockBusy(options);
      return undefined;
    },
    {
      clock,
      deadline: clock.now() + options.waitMs * LOCK_WAIT_CAP_FACTOR,
      // Exponential back-off from 5 ms to 100 ms, jittered so that a crowd of waiters spreads out.
      pollMs: (sleeps) => {
        const delay = Math.min(LOCK_POLL_FIRST_MS * 2 ** sleeps, LOCK_POLL_MAX_MS);
        return delay + Math.random() * delay;
      },
    },
  );
  if (release === undefined) throw lockBusy(options);
  return release;
}

function lockBusy(options: LockOptions & { waitMs: number }): CatherdError {
  return new CatherdError(
    "E_IO_LOCK",
    `${options.lockPath} is held by another catherd for over ${options.waitMs} ms`,
    { fix: `retry; if no catherd is running, remove the stale lock: rmdir ${options.lockPath}` },
  );
}

/** Which taking of the lock this is: its directory's inode and birth time (a new holder makes a new one). */
function holderOf(lockPath: string): string | null {
  try {
    const stat = fs.statSync(lockPath);
    return `${stat.ino}:${stat.birthtimeMs}`;
  } catch {
    return null;
  }
}
