import { CatherdError, isCatherdError } from "../domain/errors.js";
import { writeEndedExit } from "../folder/exit.js";
import { agentDispatchId } from "../folder/ids.js";
import { writeRecord } from "../folder/record.js";
import { systemClock } from "../infra/clock.js";
import { isSameProcess } from "../infra/process-identity.js";
import { stopDispatch } from "../infra/stop.js";
import { adoptIfOrphaned } from "./adopt.js";
import { type DispatchView, inspectDispatch } from "./inspect.js";

// A dispatch whose supervisor is gone is settled by whoever finds it: exit.json (created exclusively, so
// racing readers agree on one) and then record.json (exclusive too). Exactly one record, always.

/**
 * Has an orphan adopted by a new supervisor (adopt.ts), records a dispatch found `lost`, or finishes one
 * whose supervisor died between exit.json and record.json. Anything else is left alone. Returns the view
 * after settling.
 */
export async function settleIfDead(found: DispatchView): Promise<DispatchView> {
  const view = found.state === "orphaned" ? await adoptIfOrphaned(found) : found;
  if (view.state === "lost") {
    const why =
      view.supervisor === null
        ? "the supervisor never started"
        : `supervisor ${view.supervisor.pid} is gone and left no exit.json`;
    return recordEnding(view.dir, () =>
      writeEndedExit(view.dir, {
        reason: "lost",
        error: { code: "E_SUPERVISOR_LOST", message: why },
        pid: view.proc?.pid ?? null,
        startedAt: firstStartedAt(view),
        adoptions: view.supervisor?.adoptions ?? 0,
      }),
    );
  }
  if (view.state === "exited" && !supervisorAlive(view)) return recordEnding(view.dir, null);
  return view;
}

/**
 * Writes exit.json (when given) and record.json, then reads the folder again. A disk that refuses the
 * write (full, read-only) is a problem on the view — the next reader tries again — never a crash.
 */
async function recordEnding(dir: string, writeExit: (() => void) | null): Promise<DispatchView> {
  let failure: unknown = null;
  try {
    writeExit?.();
    await writeRecord(dir);
  } catch (error) {
    failure = error;
  }
  const view = inspectDispatch(dir);
  // A torn or newer exit.json is already among the problems; a refused write is not.
  if (failure !== null && !isCatherdError(failure)) {
    const message = failure instanceof Error ? failure.message : String(failure);
    view.problems.push(
      new CatherdError("E_IO_WRITE", `cannot record ${dir}: ${message}`, {
        fix: "free disk space (or fix the folder's permissions), then run catherd status again",
        cause: failure,
      }),
    );
  }
  return view;
}

/**
 * Stops an orphaned agent (its supervisor is gone) — only if its pid and start time read back exactly —
 * and records the dispatch `cancelled`.
 */
export async function stopOrphan(view: DispatchView, killGraceMs: number): Promise<DispatchView> {
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
    systemClock,
  );
  const writeExit = () =>
    writeEndedExit(view.dir, {
      reason: "cancelled",
      error: {
        code: "E_SUPERVISOR_LOST",
        message: "cancelled while orphaned: the supervisor was gone, catherd cancel stopped the agent",
      },
      stop,
      pid: proc?.pid ?? null,
      startedAt: firstStartedAt(view),
      adoptions: view.supervisor?.adoptions ?? 0,
    });
  return recordEnding(view.dir, writeExit);
}

/** When the dispatch's first supervisor started (an adopter's supervisor.json carries it along). */
function firstStartedAt(view: DispatchView): string | null {
  return view.supervisor?.firstStartedAt ?? view.supervisor?.startedAt ?? null;
}

function supervisorAlive(view: DispatchView): boolean {
  return view.supervisor !== null && isSameProcess(view.supervisor.pid, view.supervisor.startTime);
}
