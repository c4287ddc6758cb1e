import type { DispatchState } from "./vocab.js";

/** What a reader knows about a dispatch folder: which files exist and which processes are alive. */
export interface DispatchObservation {
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
