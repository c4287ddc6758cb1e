import { CatherdError } from "../domain/errors.js";
import {
  defaultSlots,
  type QueueView,
  slotCount,
  started as startedIn,
  viewOf,
} from "../domain/lock/slots.js";
import { formatDuration } from "../domain/text/duration.js";
import type { Clock } from "../infra/clock.js";
import { signalGroup } from "../infra/process-identity.js";
import { judgeClaims, machineCores, slotProcess } from "../infra/slot-identity.js";
import { readSlots, slotClassDir } from "../infra/slot-store.js";
import { dispatchLinkOf, type LockRequest } from "./lock-request.js";
import { DispatchReport } from "./report.js";
import { startCommand } from "./run-command.js";
import { LockSignals, signalExitCode } from "./signals.js";
import { change, leaveQueue, type Taker, takeSlot } from "./take-slot.js";

// `catherd lock -- CMD`: take a slot of the class, run CMD in the foreground, release the slot when CMD
// ends, exit with CMD's status (specs/lock.md). The slot is released on every path out: CMD's end, a
// signal while waiting, --wait running out, an error. A SIGKILL leaves the claim in the queue, where the
// next taker finds its process gone and drops it.

export interface LockOutcome {
  /** The process exit status: CMD's, 128 + n after a signal while waiting, or the table's for an error. */
  exitCode: number;
  /** An error to print (E_INTERRUPTED after a signal while waiting); null when CMD ran. */
  error: CatherdError | null;
}

/** Takes a slot, runs the command, releases the slot. Throws E_LOCK_BUSY when `--wait` runs out. */
export async function runLocked(
  request: LockRequest,
  home: string,
  env: NodeJS.ProcessEnv,
  clock: Clock,
): Promise<LockOutcome> {
  const signals = new LockSignals();
  try {
    const taker = takerOf(request, home, env, clock);
    return await lockAndRun({ request, taker, report: reportOf(taker, request), signals });
  } finally {
    signals.dispose();
  }
}

/** One `catherd lock` under way: what it asked, its claim, where it reports, the signals it heard. */
interface LockRun {
  request: LockRequest;
  taker: Taker;
  /** The dispatch whose agent runs it hears of its wait and its run (lock-reports/); null outside one. */
  report: DispatchReport | null;
  signals: LockSignals;
}

/** This process's claim on the class, with the slot count it allows and the dispatch it runs for. */
export function takerOf(request: LockRequest, home: string, env: NodeJS.ProcessEnv, clock: Clock): Taker {
  const dir = slotClassDir(home, request.cls);
  const own = request.slots ?? request.envSlots;
  return {
    dir,
    cls: request.cls,
    claim: {
      id: `${process.pid}-${Math.random().toString(36).slice(2, 10)}`,
      owner: slotProcess(process.pid),
      command: null,
      label: request.label,
      slots: slotCount(own, readSlots(dir).state, defaultSlots(machineCores())),
      askedAt: clock.wallNow().toISOString(),
      dispatch: dispatchLinkOf(env),
    },
    remember: request.slots === null ? request.envSlots : null,
    judge: judgeClaims(),
    clock,
  };
}

/** The report to the dispatch the claim names; null for a lock run outside any dispatch. */
function reportOf(taker: Taker, request: LockRequest): DispatchReport | null {
  const { dispatch, owner } = taker.claim;
  if (dispatch === null) return null;
  const who = {
    pid: owner.pid,
    startTime: owner.startTime,
    pidNs: owner.pidNs,
    class: request.cls,
    label: request.label,
  };
  return new DispatchReport(dispatch, who, () => taker.clock.wallNow());
}

/** Waits for the slot, then runs the command in it; the claim leaves the queue on every way out. */
async function lockAndRun(run: LockRun): Promise<LockOutcome> {
  const { request, taker, report, signals } = run;
  try {
    const taken = await takeSlot(taker, {
      waitMs: request.waitMs,
      interrupt: signals.interrupt.signal,
      onView: waitingReporter(run),
    });
    if (taken.kind === "interrupted") return interrupted(signals, request.cls);
    if (taken.kind === "busy") throw lockBusy(request, taken.view, taker.claim.slots, taker.dir);
    // A signal that came while the slot was being taken: nothing has run yet, so nothing runs.
    if (signals.signal !== null) {
      await leaveQueue(taker);
      return interrupted(signals, request.cls);
    }
    return await runHolding(run, taken.waitedMs);
  } catch (error) {
    await leaveQueue(taker).catch(() => {});
    throw error;
  } finally {
    report?.end();
  }
}

/** What the wait tells: one line on stderr at its first look, and each look to the dispatch's report. */
function waitingReporter({ request, taker, report }: LockRun): (view: QueueView) => void {
  const slots = taker.claim.slots;
  const waitingSince = taker.clock.wallNow();
  let said = false;
  return (view) => {
    if (!said) {
      said = true;
      process.stderr.write(`catherd lock: waiting for ${queueWords(request.cls, view, slots)}\n`);
    }
    report?.waiting(view, waitingSince, slots);
  };
}

/** Runs the command in the held slot and releases it when the command ends. */
async function runHolding(
  { request, taker, report, signals }: LockRun,
  waitedMs: number,
): Promise<LockOutcome> {
  const id = taker.claim.id;
  let held = 0;
  // The claim names the command before it runs (its gate, run-command.ts): the slot is then held while
  // either the lock or the command lives.
  const command = await startCommand(request.cmd, request.args, signals, async (pid, startTime) => {
    const state = await change(
      taker,
      (current) => startedIn(current, id, { pid, startTime }),
      (current) => current.holders.some((c) => c.id === id && c.command?.pid === pid),
    );
    held = viewOf(state, id, taker.judge).held;
  });
  // A signal between the take and the start went to the wait; the command gets it now.
  if (signals.signal !== null) signalGroup(command.pid, signals.signal);
  report?.running(waitedMs, held, taker.claim.slots);
  const exitCode = await command.ended;
  await leaveQueue(taker);
  return { exitCode, error: null };
}

function interrupted(signals: LockSignals, cls: string): LockOutcome {
  const signal = signals.signal ?? "SIGINT";
  return {
    exitCode: signalExitCode(signal),
    error: new CatherdError("E_INTERRUPTED", `interrupted (${signal}) while waiting for a ${cls} slot`, {
      fix: "run it again; nothing was run and the queue was left",
    }),
  };
}

/** "a heavy slot: 2 of 2 held, 3 waiting". */
export function queueWords(cls: string, view: QueueView, slots: number): string {
  return `a ${cls} slot: ${view.held} of ${slots} held, ${view.waiting} waiting`;
}

function lockBusy(request: LockRequest, view: QueueView, slots: number, dir: string): CatherdError {
  return new CatherdError(
    "E_LOCK_BUSY",
    `no ${request.cls} slot came free within ${formatDuration(request.waitMs ?? 0)} (${view.held} of ${slots} held, ${view.waiting} waiting); ${request.label} was not run`,
    {
      fix: `try again later or wait longer (--wait 30m); who holds them: catherd lock --status --class ${request.cls}`,
      file: dir,
    },
  );
}
