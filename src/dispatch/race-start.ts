import type { RaceFile } from "../domain/schemas.js";
import { SCHEMA_VERSION } from "../domain/schemas.js";
import { discardRace, writeRaceFile } from "../folder/race.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { runPaths } from "../infra/paths.js";
import { ensureWaker } from "../quota/waker-start.js";
import { admitAll } from "./admission.js";
import type { Committed, Staged } from "./admit/stage.js";
import { checkReady, placedRequest, type StartOptions } from "./dispatch.js";
import { launchPromoted } from "./queue/promote.js";
import { launchOrRequeue } from "./queue/requeue.js";
import { queuePositions } from "./read/queued.js";
import { doDutiesIn } from "./reader.js";
import type { DispatchRequest } from "./request/dispatch-request.js";
import type { RacePlan } from "./request/race-request.js";
import { StandbyReserve } from "./start/standby-reserve.js";

// Starting a race (specs/dispatch.md, "A race"): every attempt's CLI ready, the attempts admitted by one
// decision under the run's lock with race.json written just before they are committed, then a supervisor
// for each attempt that starts now (the first given the standby). Nothing is written when it is refused.

/** One attempt admitted: its folder, its supervisor (null while it waits in the queue), its place there. */
export interface AttemptStarted {
  committed: Committed;
  supervisorPid: number | null;
  position: number | null;
}

export interface RaceStarted {
  race: RaceFile;
  /** The race's folder (`<run>/races/<name>/<raceId>`). */
  dir: string;
  attempts: AttemptStarted[];
}

/** Starts the race `plan` names; throws what refused it, and then nothing of it is written. */
export async function startRace(plan: RacePlan, options: StartOptions): Promise<RaceStarted> {
  const clock = options.clock ?? systemClock;
  const standbys = options.standbys ?? new StandbyReserve();
  const standby = standbys.take(options.home);
  try {
    const placed = plan.attempts.map((a) => placedRequest(a, options.home));
    const attempts = await readyAttempts(placed, options.home, clock);
    const run = runPaths(options.home, plan.run);
    // race.json is written under the lock once every attempt is judged admissible, before any is committed.
    const held: { race: RaceFile | null; dir: string } = { race: null, dir: "" };
    const admitted = await admitAll(attempts, options.home, {
      clock,
      beforeCommit: (staged) => {
        held.race = raceFileOf(plan, staged, clock.wallNow());
        held.dir = writeRaceFile(run, held.race);
      },
    }).catch((error: unknown) => {
      if (held.race !== null) discardRace(run, held.race);
      throw error;
    });
    const launched = await Promise.all(
      admitted.each.map((c, i) =>
        c.queued === null ? launchOrRequeue(c.dir, { standby: i === 0 ? standby : null, clock }) : null,
      ),
    );
    await launchPromoted(admitted.promoted, null, clock);
    await doDutiesIn(admitted.withDuties, clock);
    if (admitted.each.some((c) => c.queued !== null)) ensureWaker(options.home, clock.wallNow().getTime());
    const positions = queuePositions(run);
    return {
      race: held.race as RaceFile,
      dir: held.dir,
      attempts: admitted.each.map((committed, i) => {
        const l = launched[i];
        return {
          committed,
          supervisorPid: typeof l === "object" && l?.placement === "local" ? l.pid : null,
          position: committed.queued === null ? null : (positions.get(committed.dispatchId) ?? null),
        };
      }),
    };
  } finally {
    standbys.refill(options.home, standby);
    if (options.standbys === undefined) standbys.close();
  }
}

/**
 * Each attempt as readiness gives it back — its CLI at the path the host of its placement has it —
 * each CLI of each placement asked once.
 */
async function readyAttempts(
  attempts: readonly DispatchRequest[],
  home: string,
  clock: Clock,
): Promise<DispatchRequest[]> {
  const key = (a: DispatchRequest) => `${a.placement.placement ?? ""}\0${a.backend.id}\0${a.bin}`;
  const distinct = new Map(attempts.map((a) => [key(a), a]));
  const ready = new Map(
    await Promise.all([...distinct].map(async ([k, a]) => [k, await checkReady(a, home, clock)] as const)),
  );
  return attempts.map((a) => ({ ...a, bin: ready.get(key(a))?.bin ?? a.bin }));
}

/** race.json for the plan, its attempts' ids as staged. */
function raceFileOf(plan: RacePlan, staged: readonly Staged[], at: Date): RaceFile {
  return {
    schema: SCHEMA_VERSION,
    name: plan.name,
    raceId: plan.raceId,
    run: plan.run,
    pick: plan.pick,
    createdAt: at.toISOString(),
    attempts: staged.map((s, i) => ({
      attempt: i + 1,
      name: s.name,
      dispatchId: s.dispatchId,
      backend: s.admit.backend,
      model: s.admit.model,
    })),
  };
}
