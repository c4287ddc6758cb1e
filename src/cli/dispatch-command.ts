import type { Committed } from "../dispatch/admit/stage.js";
import { startDispatch } from "../dispatch/dispatch.js";
import { dispatchFromFlags } from "../dispatch/dispatch-flags.js";
import { type RaceStarted, startRace } from "../dispatch/race-start.js";
import { DISPATCH_OPTIONS } from "../dispatch/request/dispatch-options.js";
import { CatherdError } from "../domain/errors.js";
import { BACKEND_IDS, type QueueBlocker } from "../domain/vocab.js";
import type { Submitted } from "../engines/engine.js";
import { catherdHome } from "../infra/paths.js";
import { readBrief } from "./brief-input.js";
import type { Command } from "./command-io.js";

export { INLINE_ANSWER_SCHEMA } from "../dispatch/request/answer-input.js";

export interface Dispatched {
  dispatched: {
    run: string;
    name: string;
    dispatchId: string;
    dir: string;
    backend: string;
    admittedAt: string;
    /** Null while it waits in the queue: its supervisor starts when it is promoted. */
    supervisorPid: number | null;
    queued: boolean;
    /** Its place in the run's queue (1 = next), null when it was not queued. */
    position: number | null;
    /** Why it waits (queued.json `blockedBy`), null when it was not queued. */
    blockedBy: QueueBlocker | null;
    /** With --worktree: where the agent works, created by the supervisor before the agent starts. */
    worktree: { path: string; branch: string; base: string } | null;
    /**
     * The job an engine took its supervisor as (--placement slurm): queued in the engine with its reason,
     * or running on its node. Null for a local dispatch, and for one waiting in the run's queue.
     */
    placement: Submitted | null;
  };
  /** A race (`--attempts`, `--also`; specs/dispatch.md, "A race"): `dispatched` is then its first attempt. */
  race?: RaceStartedData;
}

/** A race as `dispatch --json` answers it: its name, id, pick and folder, and each attempt admitted. */
export interface RaceStartedData {
  name: string;
  raceId: string;
  run: string;
  pick: string;
  dir: string;
  attempts: (Dispatched["dispatched"] & { attempt: number; model: string | null })[];
}

export const dispatchCommand: Command<Dispatched> = {
  name: "dispatch",
  synopsis: `--backend <${BACKEND_IDS.join("|")}>`,
  positionals: "own",
  summary:
    "Admits a brief (or, for exec, a command after --) into a run and starts its detached supervisor; " +
    "returns once the supervisor is up (or, placed on Slurm, submitted as a job), or at once when the " +
    "dispatch waits in the run's queue. The brief " +
    "comes from --brief, --brief-file, or stdin. Arguments after -- go to the CLI (for exec: the command). " +
    "Rules and outcomes: specs/dispatch.md.",
  json: "{dispatched: {run, name, dispatchId, dir, backend, admittedAt, supervisorPid, queued, position, blockedBy, worktree, placement}}",
  options: DISPATCH_OPTIONS,
  async handler(input, { standbys, stdinIsOurs }) {
    if (input.positionals.length > 0) unexpected(input.positionals);
    const { request, race } = await dispatchFromFlags(input.values, {
      readBrief: () => readBrief(input, stdinIsOurs),
      rest: input.rest,
      environment: process.env,
    });
    const home = { home: catherdHome(), ...(standbys === undefined ? {} : { standbys }) };
    if (race !== null) return raceAnswer(await startRace(race, home));
    const { admitted, supervisorPid, submitted, position } = await startDispatch(request, home);
    const plan = admitted.spec.worktree;
    const data: Dispatched = { dispatched: dispatchedOf(admitted, { supervisorPid, submitted, position }) };
    const what = `${admitted.name} (${admitted.dispatchId}, ${request.backend.id}) → ${admitted.dir}`;
    const where =
      (plan === null ? "" : `\nworktree ${plan.path} on branch ${plan.branch}`) +
      (submitted === null ? "" : `\n  ${submittedText(submitted)}`) +
      (request.followUp == null
        ? ""
        : `\n  follows up ${request.followUp.dispatchId} on its thread ${request.thread}`);
    return {
      data,
      text:
        admitted.queued === null
          ? `dispatched ${what}${where}`
          : `queued ${what}${where}\n  position ${position ?? "?"}, blocked by ${admitted.queued.blockedBy}; it starts as soon as nothing blocks it`,
    };
  },
};

/** What `dispatch --json` says of one dispatch admitted. */
function dispatchedOf(
  admitted: Committed,
  started: { supervisorPid: number | null; submitted: Submitted | null; position: number | null },
): Dispatched["dispatched"] {
  const plan = admitted.spec.worktree;
  return {
    run: admitted.admit.run,
    name: admitted.name,
    dispatchId: admitted.dispatchId,
    dir: admitted.dir,
    backend: admitted.admit.backend,
    admittedAt: admitted.admit.admittedAt,
    supervisorPid: started.supervisorPid,
    queued: admitted.queued !== null,
    position: started.position,
    blockedBy: admitted.queued?.blockedBy ?? null,
    worktree: plan === null ? null : { path: plan.path, branch: plan.branch, base: plan.base },
    placement: started.submitted,
  };
}

/** A race started: its first attempt as `dispatched`, the race and every attempt in `race`; a line each. */
function raceAnswer(started: RaceStarted): { data: Dispatched; text: string } {
  const { race } = started;
  const attempts = started.attempts.map((a, i) => ({
    ...dispatchedOf(a.committed, { supervisorPid: a.supervisorPid, submitted: null, position: a.position }),
    attempt: i + 1,
    model: a.committed.admit.model,
  }));
  const lines = attempts.map(
    (a) =>
      `  ${a.name} (${a.dispatchId}, ${a.backend}${a.model === null ? "" : ` ${a.model}`}) ${a.queued ? `queued #${a.position ?? "?"}: ${a.blockedBy}` : "started"}${a.worktree === null ? "" : ` on branch ${a.worktree.branch}`}`,
  );
  const data: Dispatched = {
    dispatched: attempts[0] as Dispatched["dispatched"],
    race: {
      name: race.name,
      raceId: race.raceId,
      run: race.run,
      pick: race.pick,
      dir: started.dir,
      attempts,
    },
  };
  const head = `race ${race.name} (${race.raceId}, --pick ${race.pick}): ${attempts.length} attempts`;
  return {
    data,
    text: `${head}\n${lines.join("\n")}\n  catherd wait ${race.name} returns once it is decided`,
  };
}

/** "slurm job 12 queued: Licenses", "slurm job 12 running on node4". */
function submittedText(job: Submitted): string {
  const what = `${job.engine} job ${job.jobId}${job.cluster === null ? "" : ` (cluster ${job.cluster})`}`;
  if (job.state === "running") return `${what} running${job.node === null ? "" : ` on ${job.node}`}`;
  return `${what} queued: ${job.reason ?? "waiting for the scheduler"}`;
}

function unexpected(positionals: string[]): never {
  throw new CatherdError("E_INPUT_INVALID", `unexpected argument ${JSON.stringify(positionals[0])}`, {
    fix: "put the command or extra CLI arguments after --",
  });
}
