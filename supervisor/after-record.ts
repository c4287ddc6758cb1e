import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import { nextAttemptDir } from "../src/folder/chain.js";
import { FILES, fileIn, runOf } from "../src/folder/layout.js";
import { readLiveMarkers } from "../src/folder/markers.js";
import { waitsUnpromotedOnDisk } from "../src/folder/queue-state.js";
import { readFolderJson } from "../src/folder/read.js";
import { FILE_MODE } from "../src/infra/atomic.js";
import { type Clock, systemClock } from "../src/infra/clock.js";
import { okValue } from "../src/infra/json-file.js";
import { IN_ENGINE_JOB_FLAG, programFile, WHEN_RELEASED_FLAG } from "../src/infra/programs.js";
import { waitUntil, wakeWhenSettled } from "../src/infra/wait-until.js";
import type { SupervisorLog } from "./log.js";
import { ownPlacement } from "./placed.js";

/** However long the promoter takes, the supervisor waits no longer than this before it exits. */
export const PROMOTER_WAIT_MS = 60_000;

/** A promoter started as the stop begins, waiting for its release (`startPromoterEarly`). */
export interface EarlyPromoter {
  /** Lets it promote: a byte on its stdin, then the end of it. Idempotent. */
  release(): void;
  started: StartedPromoter;
}

interface StartedPromoter {
  child: ChildProcess;
  pid: number | null;
  /** Resolves with how it ended: "exit code 0", a signal, or "error: …". */
  ended: Promise<string>;
}

/**
 * As the stop begins, a supervisor whose run has queued dispatches starts the promoter waiting for its
 * release (`--when-released`), so that the promoter's node start-up, its standby supervisor's and the
 * loading of promotion's modules overlap the stop and the record instead of following them; the record
 * releases it. A supervisor that dies before closes the pipe, which releases it too. Null when nothing is
 * queued: a hand-over is known only from the record, and its promoter starts after it.
 */
export async function startPromoterEarly(dir: string, log: SupervisorLog): Promise<EarlyPromoter | null> {
  const run = runOf(dir);
  if (run === null) return null;
  const markers = readLiveMarkers(run);
  if (!markers.some((m) => m.queued !== undefined)) return null;
  const started = spawnPromoter(dir, run.dir, log, {
    whenReleased: true,
    inEngineJob: await inEngineJob(dir),
  });
  if (started === null) return null;
  log("promoter-started", { pid: started.pid, released: "after the record" });
  const { child } = started;
  let released = false;
  return {
    started,
    release() {
      if (released) return;
      released = true;
      child.stdin?.end("\n");
    },
  };
}

/**
 * Right after its record, a supervisor whose run has queued dispatches, or whose chain goes on (its record
 * names a `next`), has the promoter work on the run, so that the slot it frees is taken at once and the
 * hand-over done, and waits for it (bounded): the one it started early, released now, else one started
 * now. A run without either costs one read of its live markers. The promoter is detached: a supervisor
 * killed meanwhile leaves it running; a promoter that fails leaves the queue to the next reader, which
 * promotes too.
 */
export async function promoteAfterRecord(
  dir: string,
  log: SupervisorLog,
  clock: Clock = systemClock,
  early: EarlyPromoter | null = null,
): Promise<void> {
  const run = runOf(dir);
  if (run === null) return;
  if (early !== null) {
    early.release();
    await awaitPromoter(early.started, log, clock);
  } else {
    const markers = readLiveMarkers(run);
    if (!markers.some((m) => m.queued !== undefined || m.handover === true)) return;
    await runPromoter(dir, run.dir, log, clock);
  }
  // A timed retry of this chain waits in the queue until its time, for the home's waker (started after
  // this, startWakerIfParked) or any reader after that time — but in an engine's job, readers only: a
  // waker there would start local supervisors on a compute node.
  const notBefore = timedRetryOf(dir);
  if (notBefore === null) return;
  const engine = await inEngineJob(dir);
  log("waiting-for-retry", {
    notBefore,
    left: engine ? "to readers: an engine's job does not wait" : "to the home's waker",
  });
}

/** notBefore of the attempt this folder handed over to, while it still waits in the queue; else null. */
function timedRetryOf(dir: string): string | null {
  const next = nextAttemptDir(dir);
  if (next === null || !waitsUnpromotedOnDisk(next)) return null;
  return okValue(readFolderJson(next, FILES.queued))?.notBefore ?? null;
}

/** Whether this supervisor is what an engine placed (supervisor/placed.ts). */
async function inEngineJob(dir: string): Promise<boolean> {
  return (await ownPlacement(dir)) !== null;
}

/** Starts the promoter program on the run and waits for it, at most PROMOTER_WAIT_MS. */
async function runPromoter(dir: string, runDir: string, log: SupervisorLog, clock: Clock): Promise<void> {
  const started = spawnPromoter(dir, runDir, log, {
    whenReleased: false,
    inEngineJob: await inEngineJob(dir),
  });
  if (started !== null) await awaitPromoter(started, log, clock);
}

/**
 * Starts the promoter program, detached, its output appended to the folder's supervisor.out; with
 * `whenReleased` its stdin is a pipe it waits on. Null (logged) when the output file cannot be opened.
 */
function spawnPromoter(
  dir: string,
  runDir: string,
  log: SupervisorLog,
  { whenReleased, inEngineJob }: { whenReleased: boolean; inEngineJob: boolean },
): StartedPromoter | null {
  let outFd: number;
  try {
    outFd = fs.openSync(fileIn(dir, FILES.supervisorOut), "a", FILE_MODE);
  } catch (error) {
    log("promoter-failed", { message: (error as Error).message });
    return null;
  }
  const args = [
    programFile("promoter", import.meta.url),
    runDir,
    ...(whenReleased ? [WHEN_RELEASED_FLAG] : []),
    // In an engine's job, a local supervisor it started would end with the job.
    ...(inEngineJob ? [IN_ENGINE_JOB_FLAG] : []),
  ];
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: [whenReleased ? "pipe" : "ignore", outFd, outFd],
    cwd: dir,
  });
  fs.closeSync(outFd);
  // A promoter that exits before its release must not make the supervisor's write to its pipe throw.
  child.stdin?.on("error", () => {});
  const ended = new Promise<string>((resolve) => {
    child.once("error", (error) => resolve(`error: ${error.message}`));
    child.once("exit", (code, signal) => resolve(signal ?? `exit code ${code}`));
  });
  return { child, pid: child.pid ?? null, ended };
}

/** Waits for a promoter to end, at most PROMOTER_WAIT_MS, and logs how it ended. */
async function awaitPromoter(started: StartedPromoter, log: SupervisorLog, clock: Clock): Promise<void> {
  let ended: string | null = null;
  void started.ended.then((how) => {
    ended = how;
  });
  await waitUntil(() => ended ?? undefined, {
    clock,
    deadline: clock.now() + PROMOTER_WAIT_MS,
    pollMs: PROMOTER_WAIT_MS,
    watch: wakeWhenSettled(started.ended),
  });
  // Still running past the wait: it must not keep this supervisor from exiting.
  started.child.unref();
  log("promoter", { pid: started.pid, ended: ended ?? "still running" });
}

/**
 * The home's parked work (this run's or another's: a timed retry, work held for an account's reset,
 * specs/quota.md) waits for a waker: one is started if none runs, so that after a reboot the first
 * supervisor to end starts what is due. Not from an engine's job (see promoteAfterRecord). Never throws.
 */
export async function startWakerIfParked(dir: string, log: SupervisorLog, clock: Clock): Promise<void> {
  const run = runOf(dir);
  if (run === null || (await inEngineJob(dir))) return;
  try {
    // Loaded only now: the start path stays light.
    const { ensureWaker } = await import("../src/quota/waker-start.js");
    const pid = ensureWaker(run.home, clock.wallNow().getTime());
    if (pid !== null) log("waker-started", { pid });
  } catch (error) {
    log("waker-failed", { message: (error as Error).message });
  }
}
