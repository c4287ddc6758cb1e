import { systemClock } from "../infra/clock.js";
import { isSameProcess } from "../infra/process-identity.js";
import { stopDispatch } from "../infra/stop.js";
import { writeEndedExit } from "./ended-exit.js";
import { type DispatchView, inspectDispatch } from "./inspect.js";
import { writeRecord } from "./record.js";

// A dispatch whose supervisor is gone is settled by whoever finds it: exit.json (created exclusively, so
// racing readers agree on one) and then record.json (exclusive too). Exactly one record, always.

/**
 * Records a dispatch found `lost`, or finishes one whose supervisor died between exit.json and
 * record.json. Anything else is left alone. Returns the view after settling.
 */
export async function settleIfDead(view: DispatchView): Promise<DispatchView> {
  if (view.state === "lost") {
    const why =
      view.supervisor === null
        ? "the supervisor never started"
        : `supervisor ${view.supervisor.pid} is gone and left no exit.json`;
    writeEndedExit(view.dir, {
      reason: "lost",
      error: { code: "E_SUPERVISOR_LOST", message: why },
      pid: view.proc?.pid ?? null,
      startedAt: view.supervisor?.startedAt ?? null,
    });
  } else if (!(view.state === "exited" && !supervisorAlive(view))) {
    return view;
  }
  await writeRecord(view.dir).catch(() => null);
  return inspectDispatch(view.dir);
}

/**
 * Stops an orphaned agent (its supervisor is gone) — only if its pid and start time read back exactly —
 * and records the dispatch `cancelled`.
 */
export async function stopOrphan(view: DispatchView, killGraceMs: number): Promise<DispatchView> {
  const proc = view.proc;
  let stop = { term: false, kill: false, swept: 0 };
  if (proc !== null && isSameProcess(proc.pid, proc.startTime)) {
    stop = await stopDispatch(
      {
        dispatchId: view.spec?.dispatchId ?? view.dispatchId,
        pgid: proc.pgid,
        leader: { pid: proc.pid, startTime: proc.startTime },
        killGraceMs,
      },
      systemClock,
    );
  }
  writeEndedExit(view.dir, {
    reason: "cancelled",
    error: {
      code: "E_SUPERVISOR_LOST",
      message: "cancelled while orphaned: the supervisor was gone, catherd cancel stopped the agent",
    },
    stop,
    pid: proc?.pid ?? null,
    startedAt: view.supervisor?.startedAt ?? null,
  });
  await writeRecord(view.dir).catch(() => null);
  return inspectDispatch(view.dir);
}

function supervisorAlive(view: DispatchView): boolean {
  return view.supervisor !== null && isSameProcess(view.supervisor.pid, view.supervisor.startTime);
}
