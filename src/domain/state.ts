import type { DispatchState } from "./vocab.js";

/** What a reader knows about a dispatch folder: which files exist and which processes are alive. */
export interface DispatchObservation {
  /**
   * A file that decides the state exists but cannot be read (permissions, a folder in its place): the
   * state is not known, and nobody may act on the dispatch as if it were.
   */
  unreadable?: boolean;
  hasRecord: boolean;
  hasExit: boolean;
  /** supervisor.json exists. */
  hasSupervisor: boolean;
  /** The supervisor named in supervisor.json is alive with that start time. */
  supervisorAlive: boolean;
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

/** The state of a dispatch (specs/cli.md): one pure function of what is on disk and alive. */
export function dispatchState(o: DispatchObservation, startGraceMs = START_GRACE_MS): DispatchState {
  if (o.hasRecord) return "recorded";
  if (o.unreadable === true) return "unknown";
  if (o.hasExit) return "exited";
  if (o.supervisorAlive) return o.cancelRequested ? "stopping" : "running";
  if (o.queue === "waiting") return "queued";
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
 * an orphan whose agent is named and alive adopted by a new supervisor; record a dispatch whose
 * supervisor is gone — lost, or ended (exit.json) without its record; nothing otherwise. An orphan whose
 * agent cannot be named (its supervisor died before proc.json) can only be cancelled.
 */
export type ReaderDuty = "adopt" | "record" | null;

export function readerDuty(
  state: DispatchState,
  alive: { supervisorAlive: boolean; agentNamedAlive: boolean },
): ReaderDuty {
  if (state === "orphaned") return alive.agentNamedAlive ? "adopt" : null;
  if (state === "lost") return "record";
  if (state === "exited" && !alive.supervisorAlive) return "record";
  return null;
}
