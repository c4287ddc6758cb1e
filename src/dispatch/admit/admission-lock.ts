import { lockWithin } from "../../infra/lock.js";
import type { RunPaths } from "../../infra/paths.js";

/** A held admission lock older than this is taken over: its holder died. */
export const ADMISSION_LOCK_STALE_MS = 5000;
/** How long anyone waits for the run's admission lock before E_IO_LOCK. */
export const ADMISSION_LOCK_WAIT_MS = 30_000;

/**
 * Runs `decide` under the run's admission lock (`<run>/admission.lock`): every decision about who holds a
 * slot of the run — admitting, promoting from the queue, cancelling a queued dispatch — is made there, so
 * that two processes never decide from the same picture.
 */
export async function underAdmissionLock<T>(run: RunPaths, decide: () => Promise<T>): Promise<T> {
  const release = await lockWithin({
    lockPath: run.admissionLock,
    staleMs: ADMISSION_LOCK_STALE_MS,
    waitMs: ADMISSION_LOCK_WAIT_MS,
  });
  try {
    return await decide();
  } finally {
    await release().catch(() => {});
  }
}
