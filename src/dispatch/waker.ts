import { isValidId } from "../domain/ids.js";
import type { Clock } from "../infra/clock.js";
import { tryLock } from "../infra/lock.js";
import { runPaths } from "../infra/paths.js";
import { waitUntil, watchFolders } from "../infra/wait-until.js";
import { parkedDir, wakerLock } from "../quota/home-files.js";
import { type ParkedRun, parkedOf, parkedRuns, setParked } from "../quota/parked.js";
import { ensureWaker, WAKER_LOCK_STALE_MS } from "../quota/waker-start.js";
import { underAdmissionLock } from "./admit/admission-lock.js";
import { promoteRun } from "./queue/promote.js";
import { doDutiesIn } from "./reader.js";

// Parked work started at its time with no resident daemon (specs/quota.md, "At the reset"): the waker
// lives only while the home's parked index names a run, and sleeps until the first time it names; any
// catherd command that opens the home starts at once what is due (after a reboot, the first one does) and
// makes sure a waker runs for what is due later. Promotion itself decides what starts — oldest first,
// exactly once, under the run's lock — and rewrites the index.

/** However far the next reset, the waker looks again this often (a suspended machine, a clock set). */
const MAX_LOOK_MS = 60_000;
/** A due run whose promotion failed (its lock busy past its wait) is tried again after this. */
const RETRY_MS = 1_000;

/** What every command does first: starts what is due now, and a waker for what is due later. */
export async function wakeParked(home: string, clock: Clock): Promise<void> {
  const parked = parkedRuns(home);
  if (parked.length === 0) return;
  await promoteDue(home, parked, clock);
  ensureWaker(home, clock.wallNow().getTime());
}

/**
 * The waker program's life: with the home's waker lock (none: another waker has it, and this one ends),
 * starts what is due and sleeps until the next time the index names, until it names none.
 */
export async function wakeLoop(home: string, clock: Clock): Promise<void> {
  const release = await tryLock({ lockPath: wakerLock(home), staleMs: WAKER_LOCK_STALE_MS });
  if (release === null) return;
  try {
    for (;;) {
      const parked = parkedRuns(home);
      if (parked.length === 0) return;
      await promoteDue(home, parked, clock);
      const next = parkedRuns(home)[0];
      if (next === undefined) return;
      await sleepUntil(home, next.untilMs, clock);
    }
  } finally {
    await release().catch(() => {});
  }
}

/**
 * Sleeps until `untilMs` (wall), at most MAX_LOOK_MS, cut short when the index's first time is another —
 * an earlier time parked, or the run started by someone else and taken out (then the waker may end).
 */
async function sleepUntil(home: string, untilMs: number, clock: Clock): Promise<void> {
  const waitMs = Math.min(Math.max(untilMs - clock.wallNow().getTime(), RETRY_MS), MAX_LOOK_MS);
  await waitUntil(() => (parkedRuns(home)[0]?.untilMs !== untilMs ? true : undefined), {
    clock,
    deadline: clock.now() + waitMs,
    pollMs: waitMs,
    watch: watchFolders([parkedDir(home)]),
  });
}

/**
 * Promotes each run whose parked time has come, and does the duties its promotion found. A run whose
 * index still names a time that has passed (its queue is gone, or was moved by someone else meanwhile)
 * is taken out of the index, under its lock.
 */
async function promoteDue(home: string, parked: readonly ParkedRun[], clock: Clock): Promise<void> {
  const now = clock.wallNow().getTime();
  for (const { run: name, untilMs } of parked) {
    if (untilMs > now) break;
    if (!isValidId(name)) {
      setParked(home, name, null);
      continue;
    }
    const run = runPaths(home, name);
    try {
      const { withDuties } = await promoteRun(run, { clock });
      await doDutiesIn(withDuties, clock);
      await underAdmissionLock(run, async () => {
        const after = parkedOf(home, name);
        if (after !== null && after.untilMs <= now) setParked(home, name, null);
      });
    } catch {
      // A busy lock or a launch that failed: the next look tries again.
    }
  }
}
