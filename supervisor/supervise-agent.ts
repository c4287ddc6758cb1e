import * as fs from "node:fs";
import { loadBackend } from "../src/backends/load.js";
import type { Backend } from "../src/backends/types.js";
import { SPEC_DEFAULTS } from "../src/domain/defaults.js";
import { asCatherdError, CatherdError, isCatherdError, stackOf } from "../src/domain/errors.js";
import type { Spec } from "../src/domain/schemas.js";
import { elapsedSince } from "../src/domain/watch/boot-clock.js";
import { diskEndingMessage, diskFullWords } from "../src/domain/watch/disk.js";
import { accountEnvironment } from "../src/folder/account.js";
import { agentDispatchId } from "../src/folder/dispatch-id-of.js";
import { FILES, fileIn, placeOf } from "../src/folder/layout.js";
import { absolutePaths, readSpecFile, resolveSpec } from "../src/folder/spec.js";
import { writeFolderJson } from "../src/folder/write.js";
import { bootStamp, type Clock } from "../src/infra/clock.js";
import { diskFullOf } from "../src/infra/disk-space.js";
import { hostIdentity } from "../src/infra/host-identity.js";
import { startTimeOf } from "../src/infra/process-identity.js";
import { adoptedChild } from "./adopted-child.js";
import { prepareWorkplace } from "./agent-place.js";
import { makeChannel } from "./channel.js";
import { type RunningChild, type SpawnRequest, sandboxedExitOf } from "./child.js";
import { reopenContainment, spawnContained } from "./containment.js";
import type { SupervisorDeps } from "./deps.js";
import { hasReserve, makeReserve } from "./disk-reserve.js";
import type { Ending } from "./exit-file.js";
import { finish, type Origin, type Watched } from "./finish.js";
import { failure, type SupervisorLog } from "./log.js";
import { enterPhase } from "./phases.js";
import { endingOfOwnJob, notePlacementNode, ownPlacement } from "./placed.js";
import { stopPreviousTurn } from "./previous-turn.js";
import { resumePoint } from "./resume-point.js";
import type { RaisedSandbox } from "./sandbox/sandbox.js";
import type { Steering } from "./steering.js";
import type { Adoption } from "./take-over.js";
import { pauseAt } from "./test-hooks.js";
import { type WatchInput, watchAgent } from "./watch-loop.js";

// The supervisor's work once it has claimed its folder (supervise.ts): everything it loads only then —
// its backend alone, the spec's schemas, containment, the watch loop, the stop and the record.

/** One supervision, as every part of it is handed it. */
export interface Supervision {
  dir: string;
  deps: SupervisorDeps;
  log: SupervisorLog;
  /** Aborted when the supervisor itself is asked to stop (SIGTERM, SIGINT, SIGHUP). */
  interrupt: AbortSignal;
}

/** What a supervision holds of its agent as it goes: the finish stops what is here, and lowers the sandbox. */
interface Held {
  watched: Watched | null;
  sandbox: RaisedSandbox | null;
}

/** A spec read and resolved, with its backend. */
interface Resolved {
  spec: Spec;
  backend: Backend;
}

/**
 * The first supervisor of a dispatch, once it holds supervisor.lock and supervisor.json names it (since
 * `origin`; the phase `claimed`): spawns its agent, watches it, stops it, writes the ending.
 */
export async function superviseFirst(s: Supervision, origin: Origin): Promise<void> {
  // Placed by an engine: the job now has its node, which placement.json says from here on.
  const placed = await ownPlacement(s.dir);
  if (placed !== null) notePlacementNode(s.dir, placed, s.deps, s.log);
  const held: Held = { watched: null, sandbox: null };
  let ending: Ending;
  try {
    ending = await startAndWatch(s, held);
  } catch (error) {
    ending = failedEnding(error, s.log, s.dir);
  }
  try {
    const { watched } = held;
    await finish(s.dir, s.deps, s.log, {
      ending,
      watched,
      origin,
      adoptions: 0,
      pgid: watched?.child.pgid ?? null,
      sandbox: held.sandbox,
    });
  } finally {
    await held.sandbox?.lower();
  }
}

/** Starts the agent, names it in proc.json, lets it run and watches it to its ending. */
async function startAndWatch(s: Supervision, held: Held): Promise<Ending> {
  const { spec, backend, watched } = await startAgent(s, held);
  const { child } = watched;
  s.log("spawned", { pid: child.pid, cmd: spec.cmd, containment: watched.contained.kind });
  pauseAt("after-spawn", s.dir);
  nameAgent(s, watched, spec);
  // A sandboxed agent waits at its sandbox's gate until now: it never runs unnamed (specs/sandbox.md).
  enterPhase(s.log, s.dir, "started");
  child.letRun();
  enterPhase(s.log, s.dir, "watching");
  const steering = await steeringOf(s, spec, backend, 0);
  return watchToEnding({ ...s, spec, backend, child, steering });
}

/**
 * Reads the spec, makes the reserve, prepares the agent's place, raises its sandbox and spawns it (into
 * `held`). A failure is SpawnFailure (spawn-failed), but for the reserve's NoRoom.
 */
async function startAgent(s: Supervision, held: Held): Promise<Resolved & { watched: Watched }> {
  const { dir, log } = s;
  try {
    const { spec, backend } = await resolvedSpec(dir);
    pauseAt("before-spawn", dir);
    reserveRoom(dir);
    const env = await prepareWorkplace(dir, spec, process.env, placeOf(dir)?.run ?? null);
    await stopPreviousTurn(dir, log, s.deps.clock);
    held.sandbox = await sandboxOf(s, spec, env);
    if (held.sandbox !== null) pauseAt("sandbox-raised", dir);
    held.watched = await spawnWatched(s, spec, backend, { env, sandbox: held.sandbox });
    return { spec, backend, watched: held.watched };
  } catch (error) {
    throw error instanceof NoRoom ? error : new SpawnFailure(error);
  }
}

async function resolvedSpec(dir: string): Promise<Resolved> {
  const file = readSpecFile(dir);
  const backend = await loadBackend(file.backend);
  const spec = absolutePaths(resolveSpec(file, backend, dir), dir);
  // The account's folder rides with spec.json's variables: the agent, its sandbox and its usage log see it.
  return { spec: { ...spec, env: { ...spec.env, ...accountEnvironment(dir) } }, backend };
}

/** No room for the reserve: no room for the agent's output either, and it is not started. */
function reserveRoom(dir: string): void {
  try {
    makeReserve(dir);
  } catch (error) {
    throw new NoRoom(error, dir);
  }
}

/** Spawns the agent in its containment (and its sandbox), its stdin the spec's or its steering channel. */
async function spawnWatched(
  s: Supervision,
  spec: Spec,
  backend: Backend,
  start: { env: Record<string, string>; sandbox: RaisedSandbox | null },
): Promise<Watched> {
  const { dir } = s;
  const { sandbox } = start;
  const channel = steerChannel(dir, spec, backend);
  const request: SpawnRequest = {
    cmd: spec.cmd,
    args: spec.args,
    cwd: spec.cwd,
    env: { ...start.env, ...sandbox?.env },
    sandbox,
    onSpawned: () => {
      if (sandbox !== null) pauseAt("sandbox-starting", dir);
    },
    stdinPath: channel ?? spec.stdinPath,
    stdinChannel: channel !== null,
    eventsPath: fileIn(dir, FILES.events),
    stderrPath: fileIn(dir, FILES.stderr),
  };
  const { child, contained } = await spawnContained(dir, spec, request, { log: s.log, clock: s.deps.clock });
  return { limits: spec, child, startTime: startTimeOf(child.pid), contained };
}

/**
 * Writes proc.json, naming the agent by the start time read right after the spawn. A disk that refuses it
 * ends the run as supervisor-error with E_IO_WRITE (failedEnding).
 */
function nameAgent(s: Supervision, watched: Watched, spec: Spec): void {
  const { clock, files } = s.deps;
  const { child } = watched;
  writeFolderJson(
    s.dir,
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
}

/**
 * A supervisor that took over (take-over.ts; the phase `adopted`): it cannot wait() for an agent it did
 * not spawn, so it watches it by pid and start time; it rebuilds the stream state from the files; then
 * goes on as the first one would have.
 */
export async function superviseAdopted(s: Supervision, adoption: Adoption): Promise<void> {
  const { dir, deps, log } = s;
  const { proc } = adoption;
  const origin = originOf(adoption, deps.clock, log);
  // A sandboxed agent's exit is in bubblewrap's status file (sandbox/sandbox.ts): known to an adopter too.
  const statusFile = fileIn(dir, FILES.sandboxStatus);
  const child = adoptedChild(proc, deps.clock, () =>
    fs.existsSync(statusFile) ? sandboxedExitOf(statusFile) : null,
  );
  const held: Held = { watched: null, sandbox: null };
  let ending: Ending;
  try {
    ending = await resumeAndWatch(s, adoption, child, held);
  } catch (error) {
    ending = failedEnding(error, log, dir);
  }
  // Even without a readable spec the agent it adopted is stopped, with the default grace.
  const watched = held.watched ?? unreadWatched(dir, child, proc.startTime);
  try {
    // The sandbox served again carries no bubblewrap of its own: a check raises one anew (check.ts).
    const run = { ending, watched, origin, adoptions: adoption.adoptions, pgid: proc.pgid, sandbox: null };
    await finish(dir, deps, log, run);
  } finally {
    child.dispose();
    await held.sandbox?.lower();
  }
}

/** Reopens what the supervisor before it made for the agent, then watches it from where it was. */
async function resumeAndWatch(
  s: Supervision,
  adoption: Adoption,
  child: RunningChild,
  held: Held,
): Promise<Ending> {
  const { dir, deps, log } = s;
  const { proc } = adoption;
  const { spec, backend } = await resolvedSpec(dir);
  const contained = reopenContainment(dir, spec, proc.pid, log);
  if (spec.sandbox !== undefined) {
    const { serveSandboxAgain } = await import("./sandbox/sandbox.js");
    held.sandbox = await serveSandboxAgain(dir, spec, deps.clock, log);
  }
  keepReserve(dir, log);
  held.watched = { limits: spec, child, startTime: proc.startTime, contained };
  const resume = resumePoint(dir, proc, deps.clock);
  if (resume.sinceStart.clock === "wall") {
    log("clock-fallback", { of: "agent-start", why: resume.sinceStart.why });
  }
  enterPhase(log, dir, "watching");
  const steering = await steeringOf(s, spec, backend, adoption.adoptions);
  return watchToEnding({ ...s, spec, backend, child, resume, steering });
}

/** The first supervisor's reserve, or a new one where it left none; without room, it goes on without. */
function keepReserve(dir: string, log: SupervisorLog): void {
  if (hasReserve(dir)) return;
  try {
    makeReserve(dir);
  } catch (error) {
    log("reserve-failed", failure(error));
  }
}

/** An adopted agent whose spec cannot be read: stopped by its group and the sweep, with the default grace. */
function unreadWatched(dir: string, child: RunningChild, startTime: string): Watched {
  return {
    limits: {
      dispatchId: agentDispatchId({ dir, spec: null }),
      killGraceMs: SPEC_DEFAULTS.killGraceMs,
      memoryBytes: null,
    },
    child,
    startTime,
    contained: { kind: "group+sweep", cgroup: null },
  };
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
 * The sandbox the spec asks for, raised (sandbox/sandbox.ts, loaded only for a sandboxed dispatch); null for any
 * other.
 */
async function sandboxOf(
  s: Supervision,
  spec: Spec,
  env: Record<string, string>,
): Promise<RaisedSandbox | null> {
  if (spec.sandbox === undefined) return null;
  const { raiseSandbox } = await import("./sandbox/sandbox.js");
  return raiseSandbox(s.dir, spec, env, { clock: s.deps.clock, log: s.log });
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
 * nobody carries none of it); undefined for any other. `adoption`: 0 for the first supervisor, n for the
 * n-th adopter (its session cannot know what the ones before it wrote).
 */
async function steeringOf(
  s: Supervision,
  spec: Spec,
  backend: Backend,
  adoption: number,
): Promise<Steering | undefined> {
  if (spec.steer === undefined || backend.steer === undefined) return undefined;
  const { Steering } = await import("./steering.js");
  const { dir, log, deps } = s;
  const briefPath = fileIn(dir, FILES.brief);
  return new Steering({
    dir,
    dispatchId: spec.dispatchId,
    protocol: backend.steer,
    settings: spec.steer,
    brief: fs.existsSync(briefPath) ? fs.readFileSync(briefPath, "utf8") : null,
    channel: fileIn(dir, FILES.channel),
    start: { args: spec.args, env: spec.env, cwd: spec.cwd, adoption },
    log,
    wallNow: () => deps.clock.wallNow(),
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
      seen: { diskFull: { message: diskEndingMessage(watched.disk, true) } },
      state: watched.state,
    };
  }
  const signalled = interrupt.aborted && watched.reason === "cancelled" ? String(interrupt.reason) : null;
  const budget = watched.budget;
  log("decided", { reason: watched.reason, ...(budget === null ? {} : { budget: budget.message }) });
  const ending: Ending = {
    reason: watched.reason,
    seen: {
      watchKind: watched.errorKind,
      ...(budget === null ? {} : { budget: budget.message }),
      ...(signalled === null ? {} : { signalled }),
    },
    state: watched.state,
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
  const words = { name: placement.engine, jobId: placement.jobId, state: engine.state, words: engine.words };
  return {
    reason: engine.reason,
    seen: { engine: { ...engine, words }, ...(signalled === null ? {} : { signalled }) },
    state: watched.state,
  };
}

function failedEnding(error: unknown, log: SupervisorLog, dir: string): Ending {
  if (error instanceof NoRoom) {
    log("supervisor-error", { code: "E_IO_WRITE", kind: "disk", message: error.message });
    return { reason: "supervisor-error", seen: { diskFull: { message: error.message } }, state: null };
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
  const said = { code: known.code, message: known.message };
  const ending: Ending = {
    reason: spawnFailed ? "spawn-failed" : "supervisor-error",
    seen:
      full === null
        ? { said }
        : { diskFull: { code: known.code, message: `${diskFullWords(full)}: ${known.message}` } },
    state: null,
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
