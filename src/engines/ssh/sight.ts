import type { CatherdError } from "../../domain/errors.js";
import type { EngineEnding, EngineSight } from "../engine.js";

// What the SSH engine says of a supervisor it started (specs/placement.md, "Liveness and cancel"). Asked
// only when the supervisor's lock is stale or missing. The host answers whether that pid there still runs
// the folder's supervisor. A host that does not answer says nothing — unless the supervisor's lock, on
// the shared folder a live supervisor keeps fresh whatever the network does, has been silent past
// UNREACHABLE_LOST_MS: then it is lost. Pure.

/** How long a supervisor's lock may be silent, its host not answering, before it counts as lost. */
export const UNREACHABLE_LOST_MS = 10 * 60_000;

/**
 * A host that did not answer about a supervisor whose lock (else its submission) has been silent
 * `silentMs`: unreachable, nothing recorded, up to UNREACHABLE_LOST_MS; past it, ended and lost.
 */
export function silentSight(o: {
  host: string;
  pid: string;
  silentMs: number;
  error: CatherdError;
}): EngineSight {
  if (o.silentMs <= UNREACHABLE_LOST_MS) return { kind: "unreachable", error: o.error };
  const minutes = Math.round(UNREACHABLE_LOST_MS / 60_000);
  const words = `ssh ${o.host}: supervisor ${o.pid} has not refreshed its lock for ${minutes} min, and ${o.host} does not answer: ${o.error.message}`;
  return endedSight(words, { reason: "lost", kind: "lost", code: "E_SUPERVISOR_LOST", state: "UNREACHABLE" });
}

/**
 * A supervisor the host runs, or one gone there: recorded by a reader when its lock says so too — as
 * cancelled when the folder asked it to stop (cancel's SIGTERM to one that never came up), else lost.
 */
export function sightOf(host: string, pid: string, o: { running: boolean; cancelled: boolean }): EngineSight {
  if (o.running) {
    return {
      kind: "known",
      phase: "running",
      words: `ssh ${host}: supervisor ${pid} runs`,
      reason: null,
      node: host,
      ending: { started: null, unstarted: null },
    };
  }
  const words = `ssh ${host}: supervisor ${pid} is no longer running there${o.cancelled ? " (cancelled)" : ""}`;
  return endedSight(
    words,
    o.cancelled
      ? { reason: "cancelled", kind: "cancelled", code: "cancelled", state: "CANCELLED" }
      : { reason: "lost", kind: "lost", code: "E_SUPERVISOR_LOST", state: "GONE" },
  );
}

/** A supervisor ended there, in `words`: recorded as `how` says, noting one that never started. */
function endedSight(words: string, how: Omit<EngineEnding, "words">): EngineSight {
  const ending = (started: boolean): EngineEnding => ({
    ...how,
    words: `${words}${started ? "" : "; its supervisor never started"}`,
  });
  return {
    kind: "known",
    phase: "ended",
    words,
    reason: null,
    node: null,
    ending: { started: ending(true), unstarted: ending(false) },
  };
}
