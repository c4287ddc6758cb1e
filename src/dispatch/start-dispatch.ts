import { backendFor } from "../backends/registry.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { type Admitted, admit } from "./admission.js";
import { launchPromoted } from "./queue/promote.js";
import { queuePositions } from "./read/queued.js";
import { doDutiesIn } from "./reader.js";
import { checkReadiness } from "./request/readiness.js";
import type { DispatchRequest } from "./request/request.js";
import { launchSupervisor } from "./start/launch.js";
import { dismiss, type StandbySupervisor, startStandbySupervisor } from "./start/standby.js";

/** A dispatch started: admitted, and its supervisor up — or waiting in the run's queue. */
export interface Started {
  admitted: Admitted;
  /** Null while it waits in the queue: its supervisor starts when it is promoted. */
  supervisorPid: number | null;
  /** Its place in the run's queue (1 = next), null when it was not queued. */
  position: number | null;
}

export interface StartOptions {
  home: string;
  /**
   * A standby supervisor started before the request was read (the command line starts one as its first
   * act, so that the two node start-ups overlap: dispatch/start/standby.ts). Not given: one is started
   * here, before readiness and admission, so that its start-up overlaps them.
   */
  early?: StandbySupervisor | null;
  clock?: Clock;
}

/**
 * `dispatch` (specs/dispatch.md): readiness of the CLI and of every rung of its ladder, then admission,
 * then the supervisors — its own, given the standby when it starts at once; else the standby goes to the
 * first queued dispatch its admission promoted — and last the reader's duties admission found (dead
 * dispatches to record, orphans to adopt), which never delay its own supervisor. Throws what refused it;
 * nothing is written then.
 */
export async function startDispatch(request: DispatchRequest, options: StartOptions): Promise<Started> {
  const clock = options.clock ?? systemClock;
  const standby =
    options.early === undefined ? startStandbySupervisor(options.home, { clock }) : options.early;
  try {
    await checkReady(request, options.home, clock);
    const admitted = await admit(request, options.home, clock);
    // Queued ones promoted on the way start too; a queued newcomer leaves the standby to the first of them.
    const [first, ...others] = admitted.promoted;
    const promotions = launchPromoted(others, null, clock);
    let supervisorPid: number | null = null;
    if (admitted.queued === null) supervisorPid = await launchSupervisor(admitted.dir, { standby, clock });
    if (first !== undefined) {
      const given = admitted.queued === null ? null : standby;
      await launchSupervisor(first, { standby: given, clock }).catch(() => null);
    }
    await promotions;
    await doDutiesIn(admitted.withDuties, clock);
    const position =
      admitted.queued === null ? null : (queuePositions(admitted.run).get(admitted.dispatchId) ?? null);
    return { admitted, supervisorPid, position };
  } finally {
    // One started here is this call's to dismiss; a given one its giver's. Once given a folder, no-op.
    if (standby !== null && options.early === undefined) dismiss(standby);
  }
}

/**
 * Readiness before admission: a CLI that cannot start, or is too old, fails here, before any write. The
 * CLI and every rung of its --fallback ladder, checked at once.
 */
async function checkReady(request: DispatchRequest, home: string, clock: Clock): Promise<void> {
  const checks = [
    { backend: request.backend, bin: request.bin },
    ...(request.chain?.rungs ?? []).map((rung) => ({ backend: backendFor(rung.backend), bin: rung.bin })),
  ];
  const ready = await Promise.all(checks.map((c) => checkReadiness(c.backend, c.bin, home, clock)));
  const problem = ready.find((r) => r.problem !== null)?.problem;
  if (problem != null) throw problem;
}
