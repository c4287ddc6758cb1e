import * as fs from "node:fs";
import { loadBackend } from "../src/backends/load.js";
import type { Backend } from "../src/backends/types.js";
import { elapsedSince } from "../src/domain/boot-clock.js";
import { SPEC_DEFAULTS } from "../src/domain/defaults.js";
import { diskEndingMessage, diskFullWords } from "../src/domain/disk.js";
import { asCatherdError, CatherdError, isCatherdError, stackOf } from "../src/domain/errors.js";
import type { Spec } from "../src/domain/schemas.js";
import { agentDispatchId } from "../src/folder/ids.js";
import { FILES, fileIn, placeOf } from "../src/folder/layout.js";
import { absolutePaths, readSpecFile, resolveSpec } from "../src/folder/spec.js";
import { writeFolderJson } from "../src/folder/write.js";
import { bootStamp, type Clock } from "../src/infra/clock.js";
import { diskFullOf } from "../src/infra/disk-space.js";
import { hostIdentity } from "../src/infra/host-identity.js";
import { startTimeOf } from "../src/infra/process-identity.js";
import { adoptedChild } from "./adopted-child.js";
import { makeChannel } from "./channel.js";
import { fencedExitOf } from "./child.js";
import { reopenContainment, spawnContained } from "./containment.js";
import type { SupervisorDeps } from "./deps.js";
import { hasReserve, makeReserve } from "./disk-reserve.js";
import type { Ending } from "./exit-file.js";
import type { Fence } from "./fence/fence.js";
import { finish, type Origin, type Watched } from "./finish.js";
import { failure, type SupervisorLog } from "./log.js";
import { endingOfOwnJob, notePlacementNode, ownPlacement } from "./placed.js";
import { stopPreviousTurn } from "./previous-turn.js";
import { resumePoint } from "./resume.js";
import type { Steering } from "./steering.js";
import type { Adoption } from "./take-over.js";
import { pauseAt } from "./test-hooks.js";
import { type WatchInput, watchAgent } from "./watch-loop.js";
import { prepareWorkplace } from "./workplace.js";

// The supervisor's work once it has claimed its folder (supervise.ts): everything it loads only then —
// its backend alone, the spec's schemas, containment, the watch loop, the stop and the record.

/**
 * The first supervisor of a dispatch, once it holds supervisor.lock and supervisor.json names it (since
 * `origin`): spawns its agent, watches it, stops it, writes the ending.
 */
export async function superviseFirst(
  dir: string,
  deps: SupervisorDeps,
  log: SupervisorLog,
  interrupt: AbortSignal,
  origin: Origin,
): Promise<void> {
  const { clock, files } = deps;
  // Placed by an engine: the job now has its node, which placement.json says from here on.
  const placed = await ownPlacement(dir);
  if (placed !== null) notePlacementNode(dir, placed, deps, log);

  let watched: Watched | null = null;
  let ending: Ending;
  let fence: Fence | null = null;
  try {
    let backend: Backend;
    let spec: Spec;
    try {
      const file = readSpecFile(dir);
      backend = await loadBackend(file.backend);
      spec = absolutePaths(resolveSpec(file, backend, dir), dir);
      pauseAt("before-spawn", dir);
      // No room for the reserve: no room for the agent's output either, and it is not started.
      try {
        makeReserve(dir);
      } catch (error) {
        throw new NoRoom(error, dir);
      }
      const env = await prepareWorkplace(dir, spec, process.env, placeOf(dir)?.run ?? null);
      await stopPreviousTurn(dir, log, clock);
      fence = await fenceOf(dir, spec, env, clock, log);
      if (fence !== null) pauseAt("fence-raised", dir);
      const channel = steerChannel(dir, spec, backend);
      const { child, contained } = await spawnContained(
        dir,
        spec,
        {
          cmd: spec.cmd,
          args: spec.args,
          cwd: spec.cwd,
          env: { ...env, ...fence?.env },
          fence,
          onSpawned: () => {
            if (fence !== null) pauseAt("fence-starting", dir);
          },
          stdinPath: channel ?? spec.stdinPath,
          stdinChannel: channel !== null,
          eventsPath: fileIn(dir, FILES.events),
          stderrPath: fileIn(dir, FILES.stderr),
        },
        log,
        clock,
      );
      watched = { limits: spec, child, startTime: startTimeOf(child.pid), contained };
    } catch (error) {
      throw error instanceof NoRoom ? error : new SpawnFailure(error);
    }
    const { child } = watched;
    log("spawned", { pid: child.pid, cmd: spec.cmd, containment: watched.contained.kind });
    pauseAt("after-spawn", dir);
    // A disk that refuses it ends the run as supervisor-error with E_IO_WRITE (asCatherdError below).
    writeFolderJson(
      dir,
      FILES.proc,
      {
        pid: child.pid,
        pgid: child.pgid,
        startTime: watched.startTime,
        host: hostIdentity(),
        startedAt: clock.wallNow().toISOString(),
        startedMono: bootStamp(clock),
        argv0: spec.cmd,
      },
      files,
    );
    // A fenced agent waits at its fence's gate until now: it never runs unnamed (specs/sandbox.md).
    pauseAt("named", dir);
    child.letRun();
    pauseAt("running", dir);
    const steering = await steeringOf(dir, spec, backend, log, clock);
    ending = await watchToEnding({ dir, spec, backend, child, deps, log, interrupt, steering });
  } catch (error) {
    ending = failedEnding(error, log, dir);
  }
  try {
    await finish(dir, deps, log, {
      ending,
      watched,
      origin,
      adoptions: 0,
      pgid: watched?.child.pgid ?? null,
    });
  } finally {
    await fence?.lower();
  }
}

/**
 * A supervisor that took over (take-over.ts): it cannot wait() for an agent it did not spawn, so it
 * watches it by pid and start time; it rebuilds the stream state from the files; then goes on as the
 * first one would have.
 */
export async function superviseAdopted(
  dir: string,
  deps: SupervisorDeps,
  log: SupervisorLog,
  interrupt: AbortSignal,
  adoption: Adoption,
): Promise<void> {
  const { clock } = deps;
  const { proc } = adoption;
  const origin = originOf(adoption, clock, log);
  // A fenced agent's exit is in bubblewrap's status file (fence/fence.ts): known to an adopter too.
  const statusFile = fileIn(dir, FILES.fenceStatus);
  const child = adoptedChild(proc.pid, proc.startTime, clock, proc.pgid, () =>
    fs.existsSync(statusFile) ? fencedExitOf(statusFile) : null,
  );
  let watched: Watched | null = null;
  let ending: Ending;
  let fence: Fence | null = null;
  try {
    const file = readSpecFile(dir);
    const backend = await loadBackend(file.backend);
    const spec = absolutePaths(resolveSpec(file, backend, dir), dir);
    const contained = reopenContainment(dir, spec, proc.pid, log);
    if (spec.sandbox !== undefined) {
      const { serveFenceAgain } = await import("./fence/fence.js");
      fence = await serveFenceAgain(dir, spec, clock, log);
    }
    // The first supervisor's reserve, or a new one where it left none; without room, it goes on without.
    if (!hasReserve(dir)) {
      try {
        makeReserve(dir);
      } catch (error) {
        log("reserve-failed", failure(error));
      }
    }
    watched = { limits: spec, child, startTime: proc.startTime, contained };
    pauseAt("adopted", dir);
    const resume = resumePoint(dir, proc, clock);
    if (resume.sinceStart.clock === "wall") {
      log("clock-fallback", { of: "agent-start", why: resume.sinceStart.why });
    }
    const steering = await steeringOf(dir, spec, backend, log, clock);
    ending = await watchToEnding({ dir, spec, backend, child, deps, log, interrupt, resume, steering });
  } catch (error) {
    ending = failedEnding(error, log, dir);
  }
  // Even without a readable spec the agent it adopted is stopped, with the default grace.
  watched ??= {
    limits: {
      dispatchId: agentDispatchId({ dir, spec: null }),
      killGraceMs: SPEC_DEFAULTS.killGraceMs,
      memoryBytes: null,
    },
    child,
    startTime: proc.startTime,
    contained: { kind: "group+sweep", cgroup: null },
  };
  try {
    await finish(dir, deps, log, { ending, watched, origin, adoptions: adoption.adoptions, pgid: proc.pgid });
  } finally {
    child.dispose();
    await fence?.lower();
  }
}

/**
 * Where an adopter's exit.json counts from: the first supervisor's start, as it wrote it on the wall
 * clock, placed on this process's monotonic clock by the time elapsed since — on the boot's clock when
 * both readings are of one boot, so that a jump of the wall clock neither lengthens nor shortens it (the
 * wall clock otherwise, logged as `clock-fallback`).
 */
function originOf(adoption: Adoption, clock: Clock, log: SupervisorLog): Origin {
  const now = clock.now();
  const wallNow = clock.wallNow().getTime();
  const firstWall = Date.parse(adoption.firstStartedAt);
  if (!Number.isFinite(firstWall)) return { wall: new Date(wallNow), mono: now };
  const since = elapsedSince(
    { wallMs: firstWall, boot: adoption.firstStartedMono },
    { wallMs: wallNow, boot: bootStamp(clock) },
  );
  if (since.clock === "wall") log("clock-fallback", { of: "first-supervisor-start", why: since.why });
  return { wall: new Date(firstWall), mono: now - since.ms };
}

/**
 * The fence the spec asks for, raised (fence/fence.ts, loaded only for a fenced dispatch); null for any
 * other.
 */
async function fenceOf(
  dir: string,
  spec: Spec,
  env: Record<string, string>,
  clock: Clock,
  log: SupervisorLog,
): Promise<Fence | null> {
  if (spec.sandbox === undefined) return null;
  const { raiseFence } = await import("./fence/fence.js");
  return raiseFence(dir, spec, env, { clock, log });
}

/** A steerable dispatch's channel, made before the spawn; null for any other. */
function steerChannel(dir: string, spec: Spec, backend: Backend): string | null {
  if (spec.steer === undefined || backend.steer === undefined) return null;
  const channel = fileIn(dir, FILES.channel);
  makeChannel(channel);
  return channel;
}

/**
 * The conversation of a steerable dispatch (steering.ts, loaded only for one: a supervisor that talks to
 * nobody carries none of it); undefined for any other.
 */
async function steeringOf(
  dir: string,
  spec: Spec,
  backend: Backend,
  log: SupervisorLog,
  clock: Clock,
): Promise<Steering | undefined> {
  if (spec.steer === undefined || backend.steer === undefined) return undefined;
  const { Steering } = await import("./steering.js");
  const briefPath = fileIn(dir, FILES.brief);
  return new Steering({
    dir,
    dispatchId: spec.dispatchId,
    protocol: backend.steer,
    settings: spec.steer,
    brief: fs.existsSync(briefPath) ? fs.readFileSync(briefPath, "utf8") : null,
    channel: fileIn(dir, FILES.channel),
    log,
    wallNow: () => clock.wallNow(),
  });
}

async function watchToEnding(input: WatchInput): Promise<Ending> {
  const ending = await endingOfWatch(input);
  const steering = input.steering;
  return steering === undefined
    ? ending
    : { ...ending, keptOpenMs: steering.keptOpenMs(input.deps.clock.now()) };
}

async function endingOfWatch(input: WatchInput): Promise<Ending> {
  const watched = await watchAgent(input);
  const { interrupt, log } = input;
  // What was not delivered never will be: failed, with why.
  input.steering?.end(watched.reason === "cancelled");
  if (watched.disk !== null) {
    log("decided", { reason: watched.reason, kind: "disk", place: watched.disk.place });
    return {
      reason: watched.reason,
      kind: "disk",
      state: watched.state,
      error: { code: "E_IO_WRITE", message: diskEndingMessage(watched.disk, true) },
    };
  }
  const signalled = interrupt.aborted && watched.reason === "cancelled" ? String(interrupt.reason) : null;
  const budget = watched.budget;
  log("decided", { reason: watched.reason, ...(budget === null ? {} : { budget: budget.message }) });
  const ending: Ending = {
    reason: watched.reason,
    kind: watched.errorKind,
    state: watched.state,
    error:
      budget !== null
        ? { code: "budget", message: budget.message }
        : signalled === null
          ? null
          : { code: "E_SUPERVISOR_SIGNALLED", message: `the supervisor received ${signalled}` },
  };
  // A signal in a job an engine placed may be the engine ending the job (specs/placement.md): its words
  // say how, and the dispatch is recorded so, whichever of the supervisor and its agent it reached first.
  const agentSignalled = watched.reason === "exited" && input.child.exit?.signal != null;
  const placed = signalled !== null || agentSignalled ? await ownPlacement(input.dir) : null;
  if (placed === null) return ending;
  const { placement } = placed;
  const engine = await endingOfOwnJob(input.dir, placed, input.deps.clock);
  if (engine === null) return ending;
  log("engine-ended", { jobId: placement.jobId, state: engine.state, words: engine.words });
  return {
    reason: engine.reason,
    kind: engine.kind === "oom" ? "oom" : null,
    state: watched.state,
    error: {
      code: signalled === null ? engine.code : "E_SUPERVISOR_SIGNALLED",
      message: engine.words,
      engine: { name: placement.engine, jobId: placement.jobId, state: engine.state, words: engine.words },
    },
  };
}

function failedEnding(error: unknown, log: SupervisorLog, dir: string): Ending {
  if (error instanceof NoRoom) {
    log("supervisor-error", { code: "E_IO_WRITE", kind: "disk", message: error.message });
    return {
      reason: "supervisor-error",
      kind: "disk",
      state: null,
      error: { code: "E_IO_WRITE", message: error.message },
    };
  }
  const spawnFailed = error instanceof SpawnFailure;
  const cause = spawnFailed ? error.cause : error;
  // A command that cannot start is E_SPAWN_FAILED; any other throw catherd did not anticipate is a bug,
  // E_INTERNAL, its stack in supervisor.log.
  const known =
    spawnFailed && !isCatherdError(cause)
      ? new CatherdError("E_SPAWN_FAILED", messageOf(cause), { cause })
      : asCatherdError(cause);
  // A write of the supervisor's own (proc.json) the disk refused for want of room is the disk's doing.
  const full = spawnFailed ? null : diskFullOf(cause, dir);
  const ending: Ending = {
    reason: spawnFailed ? "spawn-failed" : "supervisor-error",
    kind: full === null ? null : "disk",
    state: null,
    error: {
      code: known.code,
      message: full === null ? known.message : `${diskFullWords(full)}: ${known.message}`,
    },
  };
  log(ending.reason, {
    code: known.code,
    message: known.message,
    ...(known.code === "E_INTERNAL" ? { stack: stackOf(cause) } : {}),
  });
  return ending;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The reserve could not be made before the spawn (disk-reserve.ts): the disk is full already. */
class NoRoom extends Error {
  constructor(cause: unknown, dir: string) {
    const full = diskFullOf(cause, dir);
    super(
      full === null
        ? `cannot make room for the dispatch's files: ${messageOf(cause)}`
        : diskEndingMessage(full, false),
      { cause },
    );
  }
}

class SpawnFailure extends Error {
  constructor(override readonly cause: unknown) {
    super("spawn failed");
  }
}
