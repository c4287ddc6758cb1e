import * as fs from "node:fs";
import { judgeEnding, type Sighting } from "../../domain/ending/ending.js";
import { asCatherdError, CatherdError, isCatherdError } from "../../domain/errors.js";
import { diskStateWords } from "../../domain/watch/disk.js";
import { agentDispatchId } from "../../folder/dispatch-id-of.js";
import { writeEndedExit } from "../../folder/exit.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { writeRecord } from "../../folder/record.js";
import type { Clock } from "../../infra/clock.js";
import { diskFullOf, fileSystemOf } from "../../infra/disk-space.js";
import { isSameProcess } from "../../infra/process-identity.js";
import { stopDispatch } from "../../infra/stop.js";
import { endingOfSight } from "../read/engine-sight.js";
import { type DispatchView, inspectDispatch } from "../read/inspect.js";

// Recording a dispatch that its supervisor cannot record any more (specs/cli.md, "Readers' duties"): exit.json
// (created exclusively, so that racing writers agree on one) and then record.json (exclusive too). Exactly
// one record, always. Called by the reader gate (dispatch/reader.ts) and by cancel, never under the run's
// admission lock: writing a record snapshots git, writes the patch and measures the folder. (Under the lock
// only an exit.json is written, for a queued dispatch cancelled: endCancelledWhileQueued.)

/**
 * Records a dispatch whose duty is `record` (inspect.ts): `lost`, or ended (exit.json) by a supervisor
 * that died before its record. Returns the folder read again; any other view is returned as it is.
 */
export async function recordDead(view: DispatchView, clock: Clock): Promise<DispatchView> {
  if (view.duty !== "record") return view;
  if (view.state !== "lost") return recordEnding(view.dir, clock, null);
  const seen = lostSighting(view);
  return recordEnding(view.dir, clock, () => writeLostExit(view, seen, clock));
}

/**
 * What a reader sees of a dispatch whose supervisor left no exit.json: its engine ended the job and the
 * supervisor with it (recorded in the engine's words); a supervisor that met a full disk and could not
 * write exit.json (it left `disk-full`, an empty file); else a supervisor gone, or one that never started.
 */
function lostSighting(view: DispatchView): Sighting {
  const ending = view.placement === null ? null : endingOfSight(view.job, view.supervisor !== null);
  if (ending !== null && view.placement !== null) {
    const { jobId, engine } = view.placement;
    const words = { name: engine, jobId, state: ending.state, words: ending.words };
    return { engine: { ...ending, words } };
  }
  if (view.supervisor === null)
    return { said: { code: "E_SUPERVISOR_LOST", message: "the supervisor never started" } };
  if (fs.existsSync(fileIn(view.dir, FILES.diskFull))) {
    const message = `supervisor ${view.supervisor.pid} found the disk full (${fileSystemOf(view.dir)}) and could not write exit.json`;
    return { diskFull: { message } };
  }
  const message = `supervisor ${view.supervisor.pid} is gone and left no exit.json`;
  return { said: { code: "E_SUPERVISOR_LOST", message } };
}

/** exit.json for a lost dispatch: its reason, kind and error decided from what the reader saw. */
function writeLostExit(view: DispatchView, seen: Sighting, clock: Clock): boolean {
  const judged = judgeEnding({ reason: "lost", code: null, signal: null, seen }, null);
  const gone = { code: "E_SUPERVISOR_LOST", message: "its supervisor is gone" } as const;
  return writeEndedExit(
    view.dir,
    {
      reason: judged.reason,
      kind: judged.kind ?? null,
      error: judged.said ?? gone,
      pid: view.proc?.pid ?? null,
      startedAt: firstStartedAt(view),
      adoptions: view.supervisor?.adoptions ?? 0,
    },
    clock.wallNow(),
  );
}

/**
 * Stops an orphaned agent (its supervisor is gone) — only if its pid and start time read back exactly —
 * and records the dispatch `cancelled`.
 */
export async function stopOrphan(
  view: DispatchView,
  killGraceMs: number,
  clock: Clock,
): Promise<DispatchView> {
  const proc = view.proc;
  // Without a named agent (the supervisor died before proc.json, the agent is gone and left processes
  // behind, or its start time could not be read), only the sweep runs: it kills what carries the
  // dispatch's variable, each identified exactly.
  const leader =
    proc !== null && proc.startTime !== null && isSameProcess(proc.pid, proc.startTime)
      ? { pid: proc.pid, startTime: proc.startTime, pgid: proc.pgid }
      : null;
  const stop = await stopDispatch(
    {
      dispatchId: agentDispatchId(view),
      pgid: leader?.pgid ?? null,
      leader: leader === null ? null : { pid: leader.pid, startTime: leader.startTime },
      killGraceMs,
    },
    clock,
  );
  return recordEnding(view.dir, clock, () =>
    writeEndedExit(
      view.dir,
      {
        reason: "cancelled",
        error: {
          code: "E_SUPERVISOR_LOST",
          message: "cancelled while orphaned: the supervisor was gone, catherd cancel stopped the agent",
        },
        stop,
        pid: proc?.pid ?? null,
        startedAt: firstStartedAt(view),
        adoptions: view.supervisor?.adoptions ?? 0,
      },
      clock.wallNow(),
    ),
  );
}

/**
 * Ends a queued dispatch cancelled before it was ever started: its exit.json (reason `cancelled`), which
 * takes it out of the queue for good. Under the run's lock, held by the caller; the record is not written
 * here — it snapshots git and measures the folder — but after the lock, as a reader's duty (the folder is
 * `exited` without a record), by the caller or, should it die first, by the next reader.
 */
export function endCancelledWhileQueued(dir: string, clock: Clock): void {
  writeEndedExit(
    dir,
    {
      reason: "cancelled",
      error: { code: "cancelled", message: "cancelled while queued: it never started" },
    },
    clock.wallNow(),
  );
}

/** Records a dispatch whose supervisor did not come up (dispatch/start/launch.ts): `lost`, with why. */
export async function recordStartFailure(dir: string, message: string, clock: Clock): Promise<void> {
  writeEndedExit(dir, { reason: "lost", error: { code: "E_SUPERVISOR_START", message } }, clock.wallNow());
  await writeRecord(dir, clock).catch(() => null);
}

/**
 * Records a dispatch whose supervisor the engine did not take (dispatch/start/submit-to-engine.ts): `spawn-failed`,
 * with the engine's error (E_ENGINE_REFUSED and its words, E_ENGINE_MISSING, E_ENGINE_TIMEOUT).
 */
export async function recordSubmitFailure(dir: string, error: CatherdError, clock: Clock): Promise<void> {
  writeEndedExit(
    dir,
    { reason: "spawn-failed", error: { code: error.code, message: error.message } },
    clock.wallNow(),
  );
  await writeRecord(dir, clock).catch(() => null);
}

/**
 * Writes exit.json (when given) and record.json, then reads the folder again. A disk that refuses the
 * write (full, read-only) is a problem on the view — the next reader tries again — never a crash.
 */
async function recordEnding(
  dir: string,
  clock: Clock,
  writeExit: (() => void) | null,
): Promise<DispatchView> {
  let failure: unknown = null;
  try {
    writeExit?.();
    await writeRecord(dir, clock);
  } catch (error) {
    failure = error;
  }
  const view = inspectDispatch(dir, { clock });
  // A torn or newer exit.json is already among the problems; a refused write, or a bug, is not.
  if (failure !== null && !isCatherdError(failure)) view.problems.push(recordFailure(dir, failure));
  return view;
}

/**
 * Why a dispatch's record cannot be written now: a disk that refused the write (E_IO_WRITE, its state
 * when it is full) with the fix of freeing space; anything else with its own code and fix (asCatherdError:
 * a refused read, or catherd's own error, E_INTERNAL), never the disk's.
 */
function recordFailure(dir: string, failure: unknown): CatherdError {
  // What a waiter matches on (wait.ts): this dispatch's record cannot be written now.
  const file = fileIn(dir, FILES.record);
  const error = asCatherdError(failure);
  if (error.code !== "E_IO_WRITE") {
    // A refused read keeps its errno's fix; a bug (E_INTERNAL) says to report it.
    return new CatherdError(error.code, `cannot record ${dir}: ${error.message}`, {
      ...(error.fix === undefined ? {} : { fix: error.fix }),
      cause: failure,
      file,
    });
  }
  const full = diskFullOf(failure, dir);
  return new CatherdError(
    "E_IO_WRITE",
    `cannot record ${dir}: ${full !== null ? diskStateWords(full) : error.message}`,
    {
      fix: "free disk space (or fix the folder's permissions), then run catherd status again",
      cause: failure,
      file,
    },
  );
}

/** When the dispatch's first supervisor started (an adopter's supervisor.json carries it along). */
function firstStartedAt(view: DispatchView): string | null {
  return view.supervisor?.firstStartedAt ?? view.supervisor?.startedAt ?? null;
}
