import * as fs from "node:fs";
import { backendFor } from "../src/backends/registry.js";
import type { Backend } from "../src/backends/types.js";
import { asCatherdError, CatherdError, isCatherdError, stackOf } from "../src/domain/errors.js";
import type { Spec } from "../src/domain/schemas.js";
import type { ErrorCode, ErrorKind, ExitReason } from "../src/domain/vocab.js";
import type { WatchState } from "../src/domain/watch.js";
import { writeExit as writeExitFile } from "../src/folder/exit.js";
import { FILES, fileIn, placeOf } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import { absolutePaths, readSpecFile, resolveSpec } from "../src/folder/spec.js";
import type { FolderJsonBody } from "../src/folder/write.js";
import { writeFolderJson } from "../src/folder/write.js";
import { tryLock } from "../src/infra/lock.js";
import { isSameProcess, startTimeOf } from "../src/infra/process-identity.js";
import { type StopReport, stopDispatch } from "../src/infra/stop.js";
import { promoteAfterRecord } from "./after-record.js";
import { type RunningChild, spawnAgent } from "./child.js";
import type { SupervisorDeps } from "./deps.js";
import { fileLog, type SupervisorLog } from "./log.js";
import { pauseAt } from "./test-hooks.js";
import { watchAgent } from "./watch-loop.js";
import { prepareWorkplace } from "./workplace.js";

/**
 * How long a supervisor lock survives a frozen holder before another may take it over. The lock is
 * refreshed every half of this, and each refresh wakes a quiet supervisor: longer is cheaper. It delays
 * only a second `catherd supervise` of a folder whose supervisor died before starting its agent; readers
 * judge a supervisor by its pid and start time, never by its lock.
 */
export const SUPERVISOR_LOCK_STALE_MS = 30_000;

interface Ending {
  reason: ExitReason;
  /** What the provider's words made of the end (decide's verdict); null when they made nothing of it. */
  kind: ErrorKind | null;
  state: WatchState | null;
  error: { code: ErrorCode; message: string } | null;
}

/**
 * Supervises the dispatch in `dir` from start to record (specs/supervisor.md). Returns the process exit
 * code: 0 whenever the folder was handled (even if the agent failed), or when another supervisor has it.
 */
export async function superviseDispatch(
  dir: string,
  deps: SupervisorDeps,
  interrupt: AbortSignal,
): Promise<number> {
  const log = fileLog(fileIn(dir, FILES.supervisorLog), () => deps.clock.wallNow());
  const release = await tryLock(dir, {
    lockPath: fileIn(dir, FILES.supervisorLock),
    staleMs: SUPERVISOR_LOCK_STALE_MS,
    onCompromised: (error) => log("lock-compromised", { message: error.message }),
  });
  if (release === null) {
    log("already-supervised", { pid: process.pid });
    return 0;
  }
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

/**
 * A folder whose agent was already started (proc.json), ended (exit.json), or whose supervisor.json
 * names another live supervisor is not ours: a lock taken over from a frozen supervisor must not run the
 * agent a second time.
 */
function alreadyHandled(dir: string): string | null {
  if (fs.existsSync(fileIn(dir, FILES.exit))) return "exit.json exists";
  if (fs.existsSync(fileIn(dir, FILES.proc))) return "proc.json exists";
  const sup = readFolderJson(dir, FILES.supervisor);
  if (
    sup.kind === "ok" &&
    sup.value.pid !== process.pid &&
    isSameProcess(sup.value.pid, sup.value.startTime)
  ) {
    return `supervisor ${sup.value.pid} is alive`;
  }
  return null;
}

async function supervise(dir: string, deps: SupervisorDeps, log: SupervisorLog, interrupt: AbortSignal) {
  const { clock, files } = deps;
  const startedAt = clock.wallNow();
  const startedMono = clock.now();
  writeFolderJson(
    dir,
    FILES.supervisor,
    {
      pid: process.pid,
      startTime: startTimeOf(process.pid),
      startedAt: startedAt.toISOString(),
    },
    files,
  );

  let spec: Spec | null = null;
  let child: RunningChild | null = null;
  /** The agent's start time as read right after the spawn: the stop trusts this, never proc.json on disk. */
  let childStartTime: string | null = null;
  let ending: Ending;
  let stop: StopReport = { term: false, kill: false, swept: 0 };
  try {
    let backend: Backend;
    try {
      const file = readSpecFile(dir);
      backend = backendFor(file.backend);
      spec = absolutePaths(resolveSpec(file, backend, dir), dir);
      pauseAt("before-spawn", dir);
      const env = await prepareWorkplace(dir, spec, process.env, placeOf(dir)?.run ?? null);
      child = await spawnAgent({
        cmd: spec.cmd,
        args: spec.args,
        cwd: spec.cwd,
        env,
        stdinPath: spec.stdinPath,
        eventsPath: fileIn(dir, FILES.events),
        stderrPath: fileIn(dir, FILES.stderr),
      });
    } catch (error) {
      throw new SpawnFailure(error);
    }
    childStartTime = startTimeOf(child.pid);
    log("spawned", { pid: child.pid, cmd: spec.cmd });
    pauseAt("after-spawn", dir);
    // A disk that refuses it ends the run as supervisor-error with E_IO_WRITE (asCatherdError below).
    writeFolderJson(
      dir,
      FILES.proc,
      {
        pid: child.pid,
        pgid: child.pid,
        startTime: childStartTime,
        startedAt: clock.wallNow().toISOString(),
        argv0: spec.cmd,
      },
      files,
    );
    pauseAt("running", dir);
    const watched = await watchAgent({ dir, spec, backend, child, deps, log, interrupt });
    const signalled = interrupt.aborted && watched.reason === "cancelled" ? String(interrupt.reason) : null;
    ending = {
      reason: watched.reason,
      kind: watched.errorKind,
      state: watched.state,
      error:
        signalled === null
          ? null
          : { code: "E_SUPERVISOR_SIGNALLED", message: `the supervisor received ${signalled}` },
    };
    log("decided", { reason: watched.reason });
  } catch (error) {
    const spawnFailed = error instanceof SpawnFailure;
    const cause = spawnFailed ? error.cause : error;
    // A command that cannot start is E_SPAWN_FAILED; any other throw catherd did not anticipate is a bug,
    // E_INTERNAL, its stack in supervisor.log.
    const known =
      spawnFailed && !isCatherdError(cause)
        ? new CatherdError("E_SPAWN_FAILED", messageOf(cause), { cause })
        : asCatherdError(cause);
    ending = {
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
  }

  if (child !== null && spec !== null) {
    stop = await stopAgent(dir, spec, child, childStartTime, deps, log);
    // The leader is reaped by now or soon: its own code and signal belong in exit.json.
    if (child.exit === null) await Promise.race([child.exited, clock.sleep(1000)]);
  }
  const exitWritten = writeExit(dir, deps, log, {
    ending,
    stop,
    child,
    startedAt,
    startedMono,
    durationMs: Math.round(clock.now() - startedMono),
  });
  if (exitWritten) {
    pauseAt("after-exit", dir);
    await record(dir, deps, log);
  }
}

/** record.json right after exit.json; loaded only now, so the start path stays light. */
async function record(dir: string, deps: SupervisorDeps, log: SupervisorLog) {
  try {
    const { writeRecord } = await import("../src/folder/record.js");
    const written = await writeRecord(dir, deps.files);
    log("recorded", { status: written?.status ?? "already recorded" });
  } catch (error) {
    log("record-write-failed", failure(error));
  }
  await promoteAfterRecord(dir, log).catch((error: unknown) => log("promoter-failed", failure(error)));
}

class SpawnFailure extends Error {
  constructor(override readonly cause: unknown) {
    super("spawn failed");
  }
}

async function stopAgent(
  dir: string,
  spec: Spec,
  child: RunningChild,
  startTime: string | null,
  deps: SupervisorDeps,
  log: SupervisorLog,
): Promise<StopReport> {
  try {
    const report = await stopDispatch(
      {
        dispatchId: spec.dispatchId,
        pgid: child.pid,
        leader: child.exit === null && startTime !== null ? { pid: child.pid, startTime } : null,
        killGraceMs: spec.killGraceMs,
        onTermSent: () => pauseAt("stopping", dir),
      },
      deps.clock,
    );
    log("stopped", { ...report });
    return report;
  } catch (error) {
    log("stop-error", failure(error));
    return { term: false, kill: false, swept: 0 };
  }
}

function writeExit(
  dir: string,
  deps: SupervisorDeps,
  log: SupervisorLog,
  facts: {
    ending: Ending;
    stop: StopReport;
    child: RunningChild | null;
    startedAt: Date;
    startedMono: number;
    durationMs: number;
  },
): boolean {
  const { ending, child } = facts;
  const state = ending.state;
  const toIso = (mono: number | null) =>
    mono === null ? null : new Date(facts.startedAt.getTime() + (mono - facts.startedMono)).toISOString();
  const exit: FolderJsonBody<typeof FILES.exit> = {
    reason: ending.reason,
    kind: ending.kind,
    code: child?.exit?.code ?? null,
    signal: child?.exit?.signal ?? null,
    startedAt: facts.startedAt.toISOString(),
    endedAt: deps.clock.wallNow().toISOString(),
    durationMs: facts.durationMs,
    pid: child?.pid ?? null,
    sawFinal: state?.finalAt !== null && state?.finalAt !== undefined,
    thread: state?.thread ?? null,
    openToolCalls: (state?.openTools ?? []).map((t) => ({
      id: t.id,
      label: t.label,
      openedAt: toIso(t.openedAt) ?? "",
    })),
    retries: state?.totalRetries ?? 0,
    lastEventAt: toIso(state?.lastEventAt ?? null),
    stalled: state?.stalled ?? false,
    stop: facts.stop,
    error: ending.error,
  };
  try {
    writeExitFile(dir, exit, deps.files);
    return true;
  } catch (error) {
    log("exit-write-failed", failure(error));
    return false;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A failure as a log line's fields: its message, and the stack of a throw that is a bug (E_INTERNAL). */
function failure(error: unknown): { message: string; stack?: string | null } {
  const known = asCatherdError(error);
  return known.code === "E_INTERNAL"
    ? { message: known.message, stack: stackOf(error) }
    : { message: known.message };
}
