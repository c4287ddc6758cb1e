import * as fs from "node:fs";
import * as path from "node:path";
import { loadBackend } from "../src/backends/load.js";
import {
  CHECK_KILL_GRACE_MS,
  type CheckOutcome,
  type CheckRunFile,
  type CheckSpec,
  checkMayBeDue,
  checkOutcome,
} from "../src/domain/check/check.js";
import { agentEnvironment } from "../src/domain/env.js";
import type { Spec } from "../src/domain/schemas.js";
import { elapsedSince } from "../src/domain/watch/boot-clock.js";
import { accountEnvironment } from "../src/folder/account.js";
import { FILES, fileIn, placeOf } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import { turnStatus } from "../src/folder/record.js";
import { absolutePaths, readSpecFile, resolveSpec } from "../src/folder/spec.js";
import { writeFolderJson } from "../src/folder/write.js";
import { bootStamp } from "../src/infra/clock.js";
import { okValue } from "../src/infra/json-file.js";
import { catherdHome } from "../src/infra/paths.js";
import { isSameProcess, signalGroup } from "../src/infra/process-identity.js";
import { stopDispatch } from "../src/infra/stop.js";
import { waitUntil, watchFolders } from "../src/infra/wait-until.js";
import { runInSlot, type SlotCommandEnd } from "../src/lock/run-in-slot.js";
import { SANDBOX_GO_FD, SANDBOX_STATUS_FD, SANDBOX_UP_FD } from "./child.js";
import type { SupervisorDeps } from "./deps.js";
import { failure, type SupervisorLog } from "./log.js";
import { enterPhase } from "./phases.js";
import type { RaisedSandbox } from "./sandbox/sandbox.js";

// The check of a dispatch (`--verify`; specs/dispatch.md, "Checks and races"), run by its supervisor after
// exit.json and before the record: in the agent's folder and environment, inside its sandbox when it has
// one, through a slot of the machine's lock, within its time limit; its output to verify.log, its run to
// verify.json. It runs once: verify.json names the run before it starts, and a supervisor that takes over
// a folder whose run is under way waits for that run rather than start another.

/** Where the check is run from. */
export interface CheckAt {
  dir: string;
  deps: SupervisorDeps;
  log: SupervisorLog;
  /** The agent's sandbox, still raised: the check runs inside it. */
  sandbox: RaisedSandbox | null;
}

/**
 * The shell lines that run the check and write its exit status beside it (verify.exit), so that a supervisor
 * that takes the run over learns it too. Inside a sandbox, the sandbox's own descriptors are given what its
 * start expects of a supervisor (supervisor/sandbox/bridge.ts): its status and up pipes go nowhere, and its
 * gate reads `go` at once — the check is named in verify.json before it runs (lock/run-command.ts's gate).
 */
function wrapperScript(sandboxed: boolean): string {
  const run = sandboxed
    ? `"$@" ${SANDBOX_UP_FD}>/dev/null ${SANDBOX_STATUS_FD}>/dev/null ${SANDBOX_GO_FD}<<'GO'\ngo\nGO`
    : '"$@"';
  return `f=$1; shift\n${run}\nc=$?\nprintf "%s\\n" "$c" > "$f.tmp" && mv -f "$f.tmp" "$f"\nexit "$c"`;
}

/**
 * Runs the dispatch's check when one is due: asked for, after a turn that ended ok, not run yet. A turn
 * that did not end ok gets verify.json saying so (ended, no outcome), so that readers know nothing is due.
 */
export async function checkIfDue(at: CheckAt): Promise<void> {
  const file = okValue(readFolderJson(at.dir, FILES.spec));
  if (file?.verify === undefined) return;
  const exit = okValue(readFolderJson(at.dir, FILES.exit));
  if (exit === null || !checkMayBeDue(exit.reason)) return;
  const before = okValue(readFolderJson(at.dir, FILES.check));
  if (before?.state === "ended") return;
  enterPhase(at.log, at.dir, "verifying");
  try {
    const spec = await resolvedSpecOf(at.dir);
    const check = file.verify;
    // A run verify.json names by its pid was started (its gate opens only after that write): waited for.
    // One that names none never ran — its supervisor died before the spawn, or the gate closed with it.
    if (before?.state === "running" && before.pid !== null) await awaitEarlierRun(at, before);
    else if (turnStatus(at.dir) !== "ok") writeRun(at, notRun(at, check));
    else await runCheck(at, spec, check);
  } catch (error) {
    at.log("check-failed", failure(error));
  }
}

/** spec.json resolved as the supervisor ran the agent by it: its folder and environment. */
async function resolvedSpecOf(dir: string): Promise<Spec> {
  const file = readSpecFile(dir);
  const backend = await loadBackend(file.backend);
  return absolutePaths(resolveSpec(file, backend, dir), dir);
}

/**
 * Runs the check in the agent's sandbox: the one still raised by the supervisor that ran the agent, else
 * (a supervisor that took over) one raised anew for the check and lowered after it.
 */
async function runCheck(at: CheckAt, spec: Spec, check: CheckSpec): Promise<void> {
  if (at.sandbox !== null || spec.sandbox === undefined) return runChecked(at, spec, check);
  const { raiseSandbox } = await import("./sandbox/sandbox.js");
  const env = checkEnvironment(at.dir, spec, null);
  const sandbox = await raiseSandbox(at.dir, spec, env, { clock: at.deps.clock, log: at.log });
  try {
    await runChecked({ ...at, sandbox }, spec, check);
  } finally {
    await sandbox?.lower();
  }
}

/** Runs the check once, through a slot, within its time limit; verify.json before and after. */
async function runChecked(at: CheckAt, spec: Spec, check: CheckSpec): Promise<void> {
  const { dir, deps } = at;
  const startedMono = deps.clock.now();
  const running: CheckRunFile = { ...notRun(at, check), state: "running" };
  writeRun(at, running);
  const output = fs.openSync(fileIn(dir, FILES.checkLog), "a");
  const done = new AbortController();
  const cancel = cancelSignal(at, done.signal);
  const stop = groupStopper(at, done.signal);
  try {
    const ended = await runInSlot({
      ...wrapped(at, check.command),
      place: { cwd: spec.cwd, env: checkEnvironment(dir, spec, at.sandbox), output },
      home: placeHome(dir),
      // The wait for a slot is bounded as the run is: a machine busy past it cannot judge this turn.
      waitMs: check.timeoutMs,
      clock: deps.clock,
      interrupt: cancel,
      onStarted: (pid, startTime) => {
        writeRun(at, { ...running, pid, startTime });
        at.log("check-started", { pid, command: check.command });
        void deps.clock.sleep(check.timeoutMs, done.signal).then(() => stop.for("timed-out", pid));
        onAbort(cancel, () => stop.for("cancelled", pid));
      },
    });
    done.abort();
    const durationMs = Math.round(deps.clock.now() - startedMono);
    const why = cancel.aborted ? "cancelled" : stop.why();
    writeRun(at, endedRun(at, running, { ended, why, durationMs }));
  } finally {
    done.abort();
    fs.closeSync(output);
    await stopLeftovers(at, spec);
  }
}

/** Why catherd stopped a run before its end: its time limit, a cancel; null: it ended by itself. */
type StoppedFor = "timed-out" | "cancelled" | null;

/** The run as it ended: its exit status read from what the wrapper wrote, its outcome. */
function endedRun(
  at: CheckAt,
  running: CheckRunFile,
  { ended, why, durationMs }: { ended: SlotCommandEnd; why: StoppedFor; durationMs: number },
): CheckRunFile {
  const endedAt = at.deps.clock.wallNow().toISOString();
  const base = { ...running, state: "ended" as const, endedAt, durationMs };
  if (ended.kind !== "ran") {
    const outcome: CheckOutcome =
      why === "cancelled" ? "cancelled" : ended.kind === "busy" ? "slot-busy" : "interrupted";
    return { ...base, outcome, slotWaitMs: ended.kind === "busy" ? ended.waitedMs : null };
  }
  const exitCode = wrapperExit(at.dir);
  const outcome = outcomeOf(exitCode, why);
  return { ...base, exitCode, outcome, slotWaitMs: ended.waitedMs };
}

function outcomeOf(exitCode: number | null, why: StoppedFor): CheckOutcome {
  return checkOutcome({
    exitCode,
    signal: null,
    timedOut: why === "timed-out",
    cancelled: why === "cancelled",
  });
}

/** Stops the check's group once, for the first reason that comes (SIGTERM, a grace, SIGKILL), unless it is done. */
function groupStopper(at: CheckAt, done: AbortSignal) {
  let stoppedFor: StoppedFor = null;
  return {
    why: () => stoppedFor,
    for(why: NonNullable<StoppedFor>, pid: number): void {
      if (done.aborted || stoppedFor !== null) return;
      stoppedFor = why;
      at.log("check-stopped", { pid, why });
      signalGroup(pid, "SIGTERM");
      void at.deps.clock.sleep(CHECK_KILL_GRACE_MS, done).then(() => {
        if (!done.aborted) signalGroup(pid, "SIGKILL");
      });
    },
  };
}

/** Aborted when the dispatch's cancel file appears (catherd cancel), until `until` aborts. */
function cancelSignal(at: CheckAt, until: AbortSignal): AbortSignal {
  const cancelled = new AbortController();
  const file = fileIn(at.dir, FILES.cancel);
  void waitUntil(() => (fs.existsSync(file) ? true : undefined), {
    clock: at.deps.clock,
    deadline: Number.POSITIVE_INFINITY,
    pollMs: CANCEL_POLL_MS,
    watch: watchFolders([at.dir], [FILES.cancel]),
    signal: until,
  }).then((seen) => {
    if (seen === true) cancelled.abort();
  });
  return cancelled.signal;
}

/** How often the cancel file is looked for where the folder cannot be watched. */
const CANCEL_POLL_MS = 1000;

function onAbort(signal: AbortSignal, then: () => void): void {
  if (signal.aborted) then();
  else signal.addEventListener("abort", then, { once: true });
}

/**
 * A run begun by a supervisor that died: waited for by its pid and start time (up to its time limit,
 * counted from its start, then stopped; or until a cancel stops it), and its exit status read from what
 * its wrapper wrote.
 */
async function awaitEarlierRun(at: CheckAt, run: CheckRunFile): Promise<void> {
  const { deps } = at;
  const pid = run.pid;
  const since = elapsedSince(
    { wallMs: Date.parse(run.startedAt), boot: run.startedMono ?? null },
    { wallMs: deps.clock.wallNow().getTime(), boot: bootStamp(deps.clock) },
  );
  const left = Math.max(0, run.timeoutMs - since.ms);
  const waitedFrom = deps.clock.now();
  at.log("check-awaited", { pid, leftMs: left });
  const done = new AbortController();
  const cancel = cancelSignal(at, done.signal);
  const stop = groupStopper(at, done.signal);
  if (pid !== null) onAbort(cancel, () => stop.for("cancelled", pid));
  const alive = () => pid !== null && isSameProcess(pid, run.startTime);
  const gone = await waitUntil(() => (alive() ? undefined : true), {
    clock: deps.clock,
    deadline: deps.clock.now() + left,
    pollMs: 250,
  });
  if (gone === undefined && pid !== null) stop.for("timed-out", pid);
  if (alive())
    await waitUntil(() => (alive() ? undefined : true), {
      clock: deps.clock,
      deadline: deps.clock.now() + CHECK_KILL_GRACE_MS,
      pollMs: 100,
    });
  done.abort();
  if (pid !== null && alive()) signalGroup(pid, "SIGKILL");
  const why = stop.why();
  const exitCode = why === null ? wrapperExit(at.dir) : null;
  const durationMs = Math.round(since.ms + deps.clock.now() - waitedFrom);
  const endedAt = deps.clock.wallNow().toISOString();
  writeRun(at, { ...run, state: "ended", endedAt, exitCode, outcome: outcomeOf(exitCode, why), durationMs });
}

/** The exit status the wrapper wrote (verify.exit), or null when it never wrote one (it was killed). */
function wrapperExit(dir: string): number | null {
  try {
    const text = fs.readFileSync(fileIn(dir, FILES.checkExit), "utf8").trim();
    return /^\d{1,3}$/.test(text) ? Number(text) : null;
  } catch {
    return null;
  }
}

/**
 * What the check leaves running when it ends — its group, and whatever carries the dispatch's variable —
 * is stopped as the agent's was: a check's dev server must not outlive the dispatch.
 */
async function stopLeftovers(at: CheckAt, spec: Spec): Promise<void> {
  const run = okValue(readFolderJson(at.dir, FILES.check));
  const report = await stopDispatch(
    { dispatchId: spec.dispatchId, pgid: run?.pid ?? null, leader: null, killGraceMs: 1000 },
    at.deps.clock,
  ).catch((error: unknown) => {
    at.log("check-stop-failed", failure(error));
    return null;
  });
  if (report !== null && (report.kill || report.swept > 0)) at.log("check-leftovers-stopped", { ...report });
}

/** The command line that runs the check: the wrapper, then the shell — inside the sandbox when there is one. */
function wrapped(at: CheckAt, command: string): { cmd: string; args: string[] } {
  const shell =
    at.sandbox === null
      ? { cmd: "/bin/sh", args: ["-c", command] }
      : at.sandbox.wrap("/bin/sh", ["-c", command]);
  const script = wrapperScript(at.sandbox !== null);
  return {
    cmd: "/bin/sh",
    args: ["-c", script, "sh", fileIn(at.dir, FILES.checkExit), shell.cmd, ...shell.args],
  };
}

/** The agent's environment, as its supervisor gave it (its account's, its sandbox's), for the check. */
function checkEnvironment(dir: string, spec: Spec, sandbox: RaisedSandbox | null): Record<string, string> {
  const tmp = fileIn(dir, FILES.tmp);
  return {
    ...agentEnvironment(process.env, {
      overrides: { ...spec.env, ...accountEnvironment(dir) },
      markers: { dispatchId: spec.dispatchId, run: placeOf(dir)?.run ?? null, dir },
      place: { cwd: spec.cwd, tmp: fs.existsSync(tmp) ? tmp : null },
      passed: spec.passEnv,
    }),
    ...sandbox?.env,
  };
}

/** The home whose lock the check takes a slot of: the folder's run's, else this process's. */
function placeHome(dir: string): string {
  const place = placeOf(dir);
  return place === null ? catherdHome() : path.dirname(path.dirname(place.runDir));
}

function notRun(at: CheckAt, check: CheckSpec): CheckRunFile {
  const { clock } = at.deps;
  return {
    schema: 1,
    command: check.command,
    state: "ended",
    pid: null,
    startTime: null,
    startedAt: clock.wallNow().toISOString(),
    startedMono: bootStamp(clock),
    timeoutMs: check.timeoutMs,
    slotWaitMs: null,
    endedAt: null,
    exitCode: null,
    signal: null,
    durationMs: null,
    outcome: null,
  };
}

function writeRun(at: CheckAt, run: CheckRunFile): void {
  const { schema: _schema, ...body } = run;
  writeFolderJson(at.dir, FILES.check, body, at.deps.files);
}
