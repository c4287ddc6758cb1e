import type { DispatchState } from "../vocab.js";

/** What a reader knows about a dispatch folder: which files exist and which processes are alive. */
export interface DispatchObservation {
  /**
   * A file that decides the state exists but cannot be read (permissions, a folder in its place): the
   * state is not known, and nobody may act on the dispatch as if it were.
   */
  unreadable?: boolean;
  hasRecord: boolean;
  hasExit: boolean;
  /** The agent has ended (exit.json) and its check (`--verify`) is still due: run, or about to be. */
  checkDue?: boolean;
  /** supervisor.json exists. */
  hasSupervisor: boolean;
  /**
   * The supervisor named in supervisor.json is alive: by its pid and start time on the reader's host,
   * elsewhere by its lock or its engine (domain/state/supervisor-judgement.ts).
   */
  supervisorAlive: boolean;
  /**
   * Whether the supervisor (or, before supervisor.json, the one starting it) lives cannot be told from
   * here: it runs on another host or PID namespace with a stale lock, and no engine answered. The state is
   * then `unknown` (or `exited`), and nobody records it.
   */
  undecided?: boolean;
  /**
   * For a dispatch an engine placed whose supervisor has not come up (no supervisor.json): the job's
   * phase as the engine says — pending (the engine's queue), running (its node is starting it) or ended.
   * Null: no job to ask about (a local dispatch, or one not submitted yet).
   */
  job?: "pending" | "running" | "ended" | null;
  /** The agent named in proc.json is alive with that start time (false without proc.json). */
  agentAlive: boolean;
  cancelRequested: boolean;
  /** The dispatcher named in admit.json is alive: it is still waiting for its supervisor to come up. */
  dispatcherAlive: boolean;
  /**
   * Milliseconds since admission (or since the folder appeared, for a hand-written one); for a promoted
   * dispatch, since its promotion.
   */
  ageMs: number;
  /**
   * `waiting`: admitted queued and not yet promoted; `promoted`: chosen to start (promoted.json), and then
   * `dispatcherAlive` is about the promoter; `no`: admitted to start at once.
   */
  queue: "no" | "waiting" | "promoted";
}

/** How long a dispatch may wait for its supervisor's first sign of life before it counts as lost. */
export const START_GRACE_MS = 15_000;

/**
 * How long a dispatcher (or promoter) on another host or PID namespace counts as alive, from the time it
 * asked for the supervisor: past its own wait for the supervisor (60 s at most, then it records the
 * dispatch itself) and a margin. Its pid means nothing to a reader there.
 */
export const STARTER_ELSEWHERE_MS = 75_000;

/** The state of a dispatch (specs/cli.md): one pure function of what is on disk and alive. */
export function dispatchState(o: DispatchObservation, startGraceMs = START_GRACE_MS): DispatchState {
  if (o.hasRecord) return "recorded";
  if (o.unreadable === true) return "unknown";
  if (o.hasExit) return o.checkDue === true ? "verifying" : "exited";
  if (o.supervisorAlive) return o.cancelRequested ? "stopping" : "running";
  if (o.undecided === true) return "unknown";
  if (o.queue === "waiting") return "queued";
  const job = o.job ?? null;
  if (!o.hasSupervisor && job !== null) {
    // Placed: the engine decides, whatever the age. A pending job waits in the engine's queue; a running
    // one is being started on its node; an ended one never brought its supervisor up.
    if (job === "pending") return "queued";
    if (job === "running") return "starting";
    return "lost";
  }
  // A dispatcher waits for its supervisor (and records it lost if it never comes): until it gives up, a
  // slow start on a loaded machine is not a lost dispatch.
  if (!o.hasSupervisor && (o.ageMs < startGraceMs || o.dispatcherAlive)) return "starting";
  // Its promoter died before the supervisor came up: nothing ran, so it is still waiting to be started.
  if (o.queue === "promoted" && !o.hasSupervisor) return "queued";
  return o.agentAlive ? "orphaned" : "lost";
}

/** Which of a dispatch's queue files exist: queued.json, promoted.json, exit.json. */
export interface QueueFiles {
  queued: boolean;
  promoted: boolean;
  ended: boolean;
}

/**
 * Whether a dispatch waits in its run's queue, never promoted: admitted queued, with no promoted.json and
 * no exit.json (one cancelled while queued has ended without a promotion). The one rule for the readers,
 * admission and the supervisor's timed retry.
 */
export function waitsUnpromoted(files: QueueFiles): boolean {
  return files.queued && !files.promoted && !files.ended;
}

/**
 * What a reader that finds a dispatch in `state` must do for it (specs/cli.md, "Readers' duties"): have
 * an orphan whose agent is named and alive, or a check whose supervisor died, taken over by a new
 * supervisor; record a dispatch whose
 * supervisor is gone — lost, or ended (exit.json) without its record; nothing otherwise. An orphan whose
 * agent cannot be named (its supervisor died before proc.json) can only be cancelled.
 */
export type ReaderDuty = "adopt" | "record" | null;

/**
 * `mayAdopt` is false for a dispatch an engine placed: its supervisor is the engine's job, and one started
 * outside it would hold none of the job's limits. `undecided`: whether its supervisor lives is not known
 * here (the observation's `undecided`), and an ended dispatch is then left for a reader who can tell.
 */
export function readerDuty(
  state: DispatchState,
  alive: { supervisorAlive: boolean; agentNamedAlive: boolean; mayAdopt?: boolean; undecided?: boolean },
): ReaderDuty {
  if (state === "orphaned") return alive.agentNamedAlive && alive.mayAdopt !== false ? "adopt" : null;
  // A check whose supervisor died is taken over (run, or its run waited for) by a new one; a placed
  // dispatch's supervisor is its engine's, and its record says the check was lost.
  if (state === "verifying") {
    if (alive.supervisorAlive || alive.undecided === true) return null;
    return alive.mayAdopt === false ? "record" : "adopt";
  }
  if (state === "lost") return "record";
  if (state === "exited" && !alive.supervisorAlive && alive.undecided !== true) return "record";
  return null;
}
