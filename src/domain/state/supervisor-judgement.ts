import type { HostRelation } from "./host.js";

// How a reader judges a dispatch's supervisor (specs/placement.md, "Judging a supervisor"): by its
// process where the reader shares its host (hostRelation `same`); elsewhere only by the freshness of its
// supervisor.lock, which proper-lockfile refreshes every half of its stale time while the supervisor
// lives, and by the engine that placed it. `dead` only when the lock is stale and the engine says the job
// is gone — or the host has rebooted since; a reader that can tell neither says `unknown`, and records
// nothing.

/**
 * How long a supervisor lock survives a frozen holder before another may take it over. The lock is
 * refreshed every half of this, and each refresh wakes a quiet supervisor: longer is cheaper. A reader on
 * the supervisor's host judges it by its pid and start time; a reader elsewhere by this lock's freshness
 * (and the engine); an adopter removes a dead one's lock.
 */
export const SUPERVISOR_LOCK_STALE_MS = 30_000;

/** What the reader saw of supervisor.lock: missing, or held with the age of its last refresh. */
export type LockSight = { kind: "missing" } | { kind: "held"; ageMs: number };

/**
 * The phase of what an engine placed: not started yet, holding its node, ended (the engine will not run it
 * again; one the engine no longer knows has ended too).
 */
export type EnginePhase = "pending" | "running" | "ended";

/**
 * What the engine said of the supervisor it placed: no engine (local placement), no answer, or its phase
 * with the engine's words.
 */
export type EngineAnswer =
  | { kind: "none" }
  | { kind: "unreachable"; words: string }
  | { kind: "job"; phase: EnginePhase; words: string };

export interface SupervisorSight {
  relation: HostRelation;
  /** For `same`: the supervisor named in supervisor.json is alive by its pid and start time. */
  processAlive: boolean;
  lock: LockSight;
  /** The supervisor lock's stale time: a lock refreshed less long ago than this has a live holder. */
  lockStaleMs: number;
  engine: EngineAnswer;
}

export type SupervisorVerdict =
  | { verdict: "alive"; by: "process" | "lock" | "engine" }
  | { verdict: "dead"; by: "process" | "reboot" | "engine"; words: string | null }
  | { verdict: "unknown"; why: string };

export function judgeSupervisor(sight: SupervisorSight): SupervisorVerdict {
  if (sight.relation === "same") {
    return sight.processAlive
      ? { verdict: "alive", by: "process" }
      : { verdict: "dead", by: "process", words: null };
  }
  // A refresh dated in the future (the supervisor's clock ahead of the reader's) is fresh too.
  if (sight.lock.kind === "held" && sight.lock.ageMs < sight.lockStaleMs)
    return { verdict: "alive", by: "lock" };
  const { engine } = sight;
  switch (engine.kind) {
    case "job":
      // A job that holds its node may have a frozen supervisor, or one whose refreshes a shared filesystem
      // delays: the engine ends it at its time limit, and then it is known. A job pending again after its
      // supervisor came up was requeued (by hand: catherd submits --no-requeue): that supervisor is gone.
      return engine.phase === "running"
        ? { verdict: "alive", by: "engine" }
        : { verdict: "dead", by: "engine", words: engine.words };
    case "unreachable":
      return { verdict: "unknown", why: `its lock is stale and the engine did not answer: ${engine.words}` };
    case "none":
      return sight.relation === "rebooted"
        ? { verdict: "dead", by: "reboot", words: null }
        : {
            verdict: "unknown",
            why: "it runs on another host or PID namespace, without an engine to ask, and its lock is stale: only a reader on its host can tell",
          };
  }
}
