import type { Queued } from "../../domain/admission/admission-rules.js";
import { isValidId } from "../../domain/ids.js";
import { SPEC_DEFAULT_BACKEND } from "../../domain/vocab.js";
import { type LiveMarker, readLiveMarkers } from "../../folder/markers.js";
import { waitsUnpromotedOnDisk } from "../../folder/queue-state.js";
import { dispatchDir, type RunPaths } from "../../infra/paths.js";

// A run's queue as its live markers tell it (specs/dispatch.md §7): who waits, in which order. Reading
// only: promotion (dispatch/queue/) decides under the run's lock.

/** A queued dispatch found in the run, with its marker. */
export interface QueuedEntry extends Queued {
  marker: LiveMarker;
  /** When it was queued: the queue's order (oldest first, then by id). */
  since: string;
}

/**
 * The run's live markers, each with its folder derived from its ids — never taken from its `dir`: a
 * hand-edited marker must not lead a reader, or a writer, to a folder outside the run. Markers whose
 * ids are not valid are left out.
 */
export function liveMarkersOf(run: RunPaths): LiveMarker[] {
  return readLiveMarkers(run)
    .filter((m) => isValidId(m.name) && isValidId(m.dispatchId))
    .map((m) => ({ ...m, dir: dispatchDir(run, m.name, m.dispatchId) }));
}

/** Of these markers, the dispatches waiting in the queue, never promoted, oldest first (stats only). */
export function waitingOf(markers: readonly LiveMarker[]): QueuedEntry[] {
  const entries: QueuedEntry[] = [];
  for (const marker of markers) {
    if (marker.queued === undefined || !waitsUnpromotedOnDisk(marker.dir, true)) continue;
    const entry = queuedEntry(marker, marker.queued.since);
    if (entry !== null) entries.push(entry);
  }
  return entries.sort(queueOrder);
}

/** The 1-based place of each never-promoted queued dispatch of the run, by dispatch id. */
export function queuePositions(run: RunPaths): Map<string, number> {
  const positions = new Map<string, number>();
  for (const [i, q] of waitingOf(liveMarkersOf(run)).entries()) positions.set(q.dispatchId, i + 1);
  return positions;
}

/** Oldest first; the id (creation time, then random) breaks a tie. */
export function queueOrder(a: { since: string; dispatchId: string }, b: typeof a): number {
  if (a.since !== b.since) return a.since < b.since ? -1 : 1;
  return a.dispatchId < b.dispatchId ? -1 : a.dispatchId > b.dispatchId ? 1 : 0;
}

/** The queue entry of a marker, queued since `since`. */
export function queuedEntry(marker: LiveMarker, since: string): QueuedEntry {
  const notBefore = marker.queued?.notBefore ?? null;
  const notBeforeMs = notBefore === null ? null : Date.parse(notBefore);
  return {
    marker,
    since,
    name: marker.name,
    dispatchId: marker.dispatchId,
    backend: marker.backend ?? SPEC_DEFAULT_BACKEND,
    owns: marker.owns,
    notBefore: notBeforeMs !== null && Number.isFinite(notBeforeMs) ? notBeforeMs : null,
    accounts: marker.accounts ?? null,
    tags: marker.tags ?? [],
    account: marker.account ?? null,
    host: marker.host ?? null,
    unanswered: unansweredOf(marker),
  };
}

/** A dispatch put back in the queue because its host did not answer: until when (its marker says). */
function unansweredOf(marker: LiveMarker): { until: number; reason: string } | null {
  const queued = marker.queued;
  if (queued?.blockedBy !== "host" || queued.until == null) return null;
  const until = Date.parse(queued.until);
  return Number.isFinite(until) ? { until, reason: "" } : null;
}
