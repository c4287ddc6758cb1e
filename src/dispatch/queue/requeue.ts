import * as fs from "node:fs";
import { type CatherdError, isCatherdError } from "../../domain/errors.js";
import { FILES, fileIn, placeOf, runOf } from "../../folder/layout.js";
import { readLiveMarkers, writeLiveMarker } from "../../folder/markers.js";
import { readFolderJson } from "../../folder/read.js";
import { writeFolderJson } from "../../folder/write.js";
import type { Clock } from "../../infra/clock.js";
import { okValue } from "../../infra/json-file.js";
import { parkUntil } from "../../quota/parked.js";
import { ensureWaker } from "../../quota/waker-start.js";
import { underAdmissionLock } from "../admit/admission-lock.js";
import { type Launched, launchSupervisor } from "../start/launch.js";
import type { StandbySupervisor } from "../start/standby.js";

// A dispatch whose host did not answer when its supervisor was to start there (specs/placement.md, "A
// host that does not answer"): it goes back to the run's queue, not to a record. The engine said the
// connection never came up (E_ENGINE_UNREACHABLE), so nothing of it runs there. It waits as a timed
// retry: queued.json and its marker say `host` with the engine's words, how many tries failed and when it
// is tried again (5 s after the first, doubling to 5 min: a host that reboots is back soon, one that is
// gone costs a try every 5 min), and the home's parked index wakes a promoter then (the waker), who starts
// it if nothing else holds it. It waits until its host answers or it is cancelled: never lost for it.

/** How long a host that did not answer is left before its dispatch is tried again the first time. */
export const FIRST_RETRY_MS = 5_000;
/** The longest wait between tries: each doubles the one before, up to this. */
export const MAX_RETRY_MS = 5 * 60_000;

/** The wait before try `tries` + 1 of a dispatch whose host did not answer `tries` times: 5 s, 10 s, … 5 min. */
export function retryDelayMs(tries: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.min(Math.max(tries - 1, 0), 16), MAX_RETRY_MS);
}

/**
 * Starts the supervisor of `dir` (start/launch.ts); one whose host did not answer goes back to the queue
 * (requeueUnanswered) and is "requeued". Every other failure is thrown, as launchSupervisor throws it.
 */
export async function launchOrRequeue(
  dir: string,
  options: { standby: StandbySupervisor | null; clock: Clock },
): Promise<Launched | "requeued"> {
  try {
    return await launchSupervisor(dir, options);
  } catch (error) {
    if (!isCatherdError(error) || error.code !== "E_ENGINE_UNREACHABLE") throw error;
    const host = okValue(readFolderJson(dir, FILES.admit))?.placement?.target ?? "its host";
    await requeueUnanswered(dir, host, error, options.clock);
    // Whoever launched it may be a supervisor about to end: a waker tries it again at its time.
    const run = runOf(dir);
    if (run !== null) ensureWaker(run.home, options.clock.wallNow().getTime());
    return "requeued";
  }
}

/**
 * Puts the admitted dispatch of `dir` back in its run's queue, blocked by its `host` for retryDelayMs of
 * the tries so far, under the run's admission lock: promoted.json removed, queued.json (its `tries`) and
 * the live marker saying why. Returns when it is tried again (ISO).
 */
export async function requeueUnanswered(
  dir: string,
  host: string,
  error: CatherdError,
  clock: Clock,
): Promise<string> {
  const run = runOf(dir);
  const dispatchId = placeOf(dir)?.dispatchId;
  const now = clock.wallNow();
  if (run === null || dispatchId === undefined) return now.toISOString();
  return underAdmissionLock(run, async () => {
    const queued = okValue(readFolderJson(dir, FILES.queued));
    const admitted = okValue(readFolderJson(dir, FILES.admit))?.admittedAt;
    const since = queued?.since ?? admitted ?? now.toISOString();
    const notBefore = queued?.notBefore ?? null;
    const tries = (queued?.blockedBy === "host" ? (queued.blocker?.tries ?? 0) : 0) + 1;
    const until = new Date(now.getTime() + retryDelayMs(tries)).toISOString();
    const blocker = { host, reason: error.message.slice(0, 600), until, tries };
    writeFolderJson(dir, FILES.queued, { since, blockedBy: "host", blocker, notBefore });
    fs.rmSync(fileIn(dir, FILES.promoted), { force: true });
    const marker = readLiveMarkers(run).find((m) => m.dispatchId === dispatchId);
    if (marker !== undefined) {
      const { schema: _schema, ...rest } = marker;
      writeLiveMarker(run, { ...rest, queued: { since, notBefore, blockedBy: "host", until } });
    }
    parkUntil(run.home, run.run, Date.parse(until));
    return until;
  });
}
