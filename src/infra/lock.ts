import lockfile from "proper-lockfile";
import { CatherdError } from "../domain/errors.js";

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

function baseOptions(options: LockOptions) {
  return {
    lockfilePath: options.lockPath,
    realpath: false,
    stale: options.staleMs,
    update: Math.max(1000, Math.floor(options.staleMs / 4)),
    onCompromised: options.onCompromised ?? (() => {}),
  };
}

/** Takes the lock if free; null when another live holder has it. */
export async function tryLock(target: string, options: LockOptions): Promise<Release | null> {
  try {
    return await lockfile.lock(target, { ...baseOptions(options), retries: 0 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOCKED") return null;
    throw error;
  }
}

/** Waits up to `waitMs` for the lock; E_IO_LOCK naming the lock when it stays held. */
export async function lockWithin(
  target: string,
  options: LockOptions & { waitMs: number },
): Promise<Release> {
  const started = Date.now();
  let delay = 5;
  for (;;) {
    const release = await tryLock(target, options);
    if (release !== null) return release;
    if (Date.now() - started >= options.waitMs) {
      throw new CatherdError(
        "E_IO_LOCK",
        `${options.lockPath} is held by another catherd for over ${options.waitMs} ms`,
        {
          fix: `retry; if no catherd is running, remove the stale lock: rmdir ${options.lockPath}`,
        },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, delay + Math.random() * delay));
    delay = Math.min(delay * 2, 100);
  }
}
