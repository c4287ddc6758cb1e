import * as fs from "node:fs";
import { backendFor } from "../src/backends/registry.js";
import type { Backend } from "../src/backends/types.js";
import { SPEC_DEFAULTS } from "../src/domain/defaults.js";
import { asCatherdError, CatherdError, isCatherdError, stackOf } from "../src/domain/errors.js";
import type { Spec } from "../src/domain/schemas.js";
import { SUPERVISOR_LOCK_STALE_MS } from "../src/domain/supervisor-judgement.js";
import { agentDispatchId } from "../src/folder/ids.js";
import { FILES, fileIn, placeOf } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import { absolutePaths, readSpecFile, resolveSpec } from "../src/folder/spec.js";
import { writeFolderJson } from "../src/folder/write.js";
import { hostIdentity } from "../src/infra/host-identity.js";
import { tryLock } from "../src/infra/lock.js";
import { isSameProcess, startTimeOf } from "../src/infra/process-identity.js";
import { adoptedChild } from "./adopted-child.js";
import { reopenContainment, spawnContained } from "./containment.js";
import type { SupervisorDeps } from "./deps.js";
import type { Ending } from "./exit-file.js";
import { finish, type Origin, type Watched } from "./finish.js";
import { fileLog, type SupervisorLog } from "./log.js";
import { endingOfOwnJob, notePlacementNode, ownPlacement } from "./placed.js";
import { resumePoint } from "./resume.js";
import { type Adoption, takeOver } from "./take-over.js";
import { pauseAt } from "./test-hooks.js";
import { type WatchInput, watchAgent } from "./watch-loop.js";
import { prepareWorkplace } from "./workplace.js";

export { SUPERVISOR_LOCK_STALE_MS };

/**
 * Supervises the dispatch in `dir` from start to record (specs/supervisor.md), or adopts it when its agent
 * was started by a supervisor that has died since. Returns the process exit code: 0 whenever the folder was
 * handled (even if the agent failed), or when another supervisor has it.
 */
export async function superviseDispatch(
  dir: string,
  deps: SupervisorDeps,
  interrupt: AbortSignal,
): Promise<number> {
  const log = fileLog(fileIn(dir, FILES.supervisorLog), () => deps.clock.wallNow());
  if (fs.existsSync(fileIn(dir, FILES.exit))) {
    log("already-supervised", { pid: process.pid, why: "exit.json exists" });
    return 0;
  }
  const procFile = fileIn(dir, FILES.proc);
  const release = await tryLock(dir, {
    lockPath: fileIn(dir, FILES.supervisorLock),
    staleMs: SUPERVISOR_LOCK_STALE_MS,
    onCompromised: (error) => log("lock-compromised", { message: error.message }),
  });
  if (release !== null && !fs.existsSync(procFile)) {
    try {
      const busy = alreadyHandled(dir);
      if (busy !== null) {
        log("already-supervised", { pid: process.pid, why: busy });
        return 0;
      }
      await supervise(dir, deps, log, interrupt);
      return 0;
    } finally {
      await release().catch(() => {});
    }
  }
  // An agent already started is never started again: it is adopted (take-over.ts decides who adopts, under
  // adopt.lock), or left to its live supervisor. A lock refused by a live supervisor ends here; a dead
  // one's lock looks fresh for up to its stale time, so a refusal alone does not say the holder lives.
  if (release !== null) await release().catch(() => {});
  else if (!fs.existsSync(procFile) || liveSupervisor(dir) !== null) {
    log("already-supervised", { pid: process.pid });
    return 0;
  }
  const adoption = await takeOver(dir, deps, log, SUPERVISOR_LOCK_STALE_MS);
  if (adoption === null) return 0;
  try {
    await superviseAdopted(dir, deps, log, interrupt, adoption);
  } finally {
    await adoption.release().catch(() => {});
  }
  return 0;
}

/** The pid of the live supervisor supervisor.json names (by pid and start time), if it is not this one. */
function liveSupervisor(dir: string): number | null {
  const sup = readFolderJson(dir, FILES.supervisor);
  return sup.kind === "ok" &&
    sup.value.pid !== process.pid &&
    isSameProcess(sup.value.pid, sup.value.startTime)
    ? sup.value.pid
    : null;
}

/**
 * A folder whose agent was already started (proc.json), ended (exit.json), or whose supervisor.json
 * names another live supervisor is not ours to start: a lock taken over from a frozen supervisor must not
 * run the agent a second time.
 */
function alreadyHandled(dir: string): string | null {
  if (fs.existsSync(fileIn(dir, FILES.exit))) return "exit.json exists";
  if (fs.existsSync(fileIn(dir, FILES.proc))) return "proc.json exists";
  const live = liveSupervisor(dir);
  return live === null ? null : `supervisor ${live} is alive`;
}

/** The first supervisor of a dispatch: spawns its agent, watches it, stops it, writes the ending. */
async function supervise(dir: string, deps: SupervisorDeps, log: SupervisorLog, interrupt: AbortSignal) {
  const { clock, files } = deps;
  const origin: Origin = { wall: clock.wallNow(), mono: clock.now() };
  writeFolderJson(
    dir,
    FILES.supervisor,
    {
      pid: process.pid,
      startTime: startTimeOf(process.pid),
      host: hostIdentity(),
      startedAt: origin.wall.toISOString(),
      adoptions: 0,
      firstStartedAt: origin.wall.toISOString(),
    },
    files,
  );
  // Placed by an engine: the job now has its node, which placement.json says from here on.
  const placement = ownPlacement(dir);
  if (placement !== null) notePlacementNode(dir, placement, deps, log);

  let watched: Watched | null = null;
  let ending: Ending;
  try {
    let backend: Backend;
    let spec: Spec;
    try {
      const file = readSpecFile(dir);
      backend = backendFor(file.backend);
      spec = absolutePaths(resolveSpec(file, backend, dir), dir);
      pauseAt("before-spawn", dir);
      const env = await prepareWorkplace(dir, spec, process.env, placeOf(dir)?.run ?? null);
      const { child, contained } = await spawnContained(
        dir,
        spec,
        {
          cmd: spec.cmd,
          args: spec.args,
          cwd: spec.cwd,
          env,
          stdinPath: spec.stdinPath,
          eventsPath: fileIn(dir, FILES.events),
          stderrPath: fileIn(dir, FILES.stderr),
        },
        log,
      );
      watched = { limits: spec, child, startTime: startTimeOf(child.pid), contained };
    } catch (error) {
      throw new SpawnFailure(error);
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
        pgid: child.pid,
        startTime: watched.startTime,
        host: hostIdentity(),
        startedAt: clock.wallNow().toISOString(),
        argv0: spec.cmd,
      },
      files,
    );
    pauseAt("running", dir);
    ending = await watchToEnding({ dir, spec, backend, child, deps, log, interrupt });
  } catch (error) {
    ending = failedEnding(error, log);
  }
  await finish(dir, deps, log, { ending, watched, origin, adoptions: 0, pgid: watched?.child.pid ?? null });
}

/**
 * A supervisor that took over (take-over.ts): it cannot wait() for an agent it did not spawn, so it
 * watches it by pid and start time; it rebuilds the stream state from the files; then goes on as the
 * first one would have.
 */
async function superviseAdopted(
  dir: string,
  deps: SupervisorDeps,
  log: SupervisorLog,
  interrupt: AbortSignal,
  adoption: Adoption,
) {
  const { clock } = deps;
  const { proc } = adoption;
  const firstWall = Date.parse(adoption.firstStartedAt);
  const origin: Origin = Number.isFinite(firstWall)
    ? { wall: new Date(firstWall), mono: clock.now() - (clock.wallNow().getTime() - firstWall) }
    : { wall: clock.wallNow(), mono: clock.now() };
  const child = adoptedChild(proc.pid, proc.startTime, clock);
  let watched: Watched | null = null;
  let ending: Ending;
  try {
    const file = readSpecFile(dir);
    const backend = backendFor(file.backend);
    const spec = absolutePaths(resolveSpec(file, backend, dir), dir);
    const contained = reopenContainment(dir, spec, proc.pid, log);
    watched = { limits: spec, child, startTime: proc.startTime, contained };
    pauseAt("adopted", dir);
    const resume = resumePoint(dir, proc.startedAt, clock);
    ending = await watchToEnding({ dir, spec, backend, child, deps, log, interrupt, resume });
  } catch (error) {
    ending = failedEnding(error, log);
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
  }
}

async function watchToEnding(input: WatchInput): Promise<Ending> {
  const watched = await watchAgent(input);
  const { interrupt, log } = input;
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
  const placement = signalled !== null || agentSignalled ? ownPlacement(input.dir) : null;
  if (placement === null) return ending;
  const engine = await endingOfOwnJob(input.dir, placement, input.deps.clock);
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

function failedEnding(error: unknown, log: SupervisorLog): Ending {
  const spawnFailed = error instanceof SpawnFailure;
  const cause = spawnFailed ? error.cause : error;
  // A command that cannot start is E_SPAWN_FAILED; any other throw catherd did not anticipate is a bug,
  // E_INTERNAL, its stack in supervisor.log.
  const known =
    spawnFailed && !isCatherdError(cause)
      ? new CatherdError("E_SPAWN_FAILED", messageOf(cause), { cause })
      : asCatherdError(cause);
  const ending: Ending = {
    reason: spawnFailed ? "spawn-failed" : "supervisor-error",
    kind: null,
    state: null,
    error: { code: known.code, message: known.message },
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

class SpawnFailure extends Error {
  constructor(override readonly cause: unknown) {
    super("spawn failed");
  }
}
