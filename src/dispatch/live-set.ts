import * as fs from "node:fs";
import type { Queued, Slot } from "../domain/admission.js";
import { isValidId } from "../domain/ids.js";
import { SPEC_DEFAULT_BACKEND } from "../domain/vocab.js";
import { handOverPending } from "../folder/chain.js";
import { FILES, fileIn } from "../folder/layout.js";
import { type LiveMarker, readLiveMarkers, removeLiveMarkerOf } from "../folder/markers.js";
import { notifyIfEnded } from "../folder/notify.js";
import { dispatchDir, type RunPaths } from "../infra/paths.js";
import { type DispatchView, inspectDispatch } from "./inspect.js";
import { settleIfDead } from "./settle.js";

/** A queued dispatch found in the run, with its marker. */
export interface QueuedEntry extends Queued {
  marker: LiveMarker;
  /** When it was queued: the queue's order (oldest first, then by id). */
  since: string;
}

/**
 * The run's admitted, not yet recorded dispatches, by their markers, with a lazy liveness check: only the
 * markers that could refuse a dispatch are inspected, so the time under the run's lock does not grow
 * with the number of recorded dispatches. A dead one found on the way is recorded `lost` first, then no
 * longer counts. Dispatches waiting in the queue cost one stat each: they hold no slot.
 */
export class LiveSet {
  readonly markers: LiveMarker[] = [];
  /** The run's folder of live markers. */
  readonly runLive: string;
  private readonly views = new Map<string, DispatchView>();

  constructor(readonly run: RunPaths) {
    this.runLive = run.live;
    for (const marker of readLiveMarkers(run.live)) {
      // The folder is derived from the marker's ids, never taken from its `dir`: a hand-edited marker must
      // not make admission inspect, or record into, a folder outside this run.
      if (!isValidId(marker.name) || !isValidId(marker.dispatchId)) continue;
      this.markers.push({ ...marker, dir: dispatchDir(run, marker.name, marker.dispatchId) });
    }
  }

  /** The folder as it is now (inspected once per LiveSet; a dead one recorded on the way). */
  async view(marker: LiveMarker): Promise<DispatchView> {
    const known = this.views.get(marker.dir);
    if (known !== undefined) return known;
    const view = await settleIfDead(inspectDispatch(marker.dir));
    if (view.state === "recorded" && !handOverPending(marker.dir, view.record)) {
      // A stale marker: its recorder may have died before the notification was started.
      notifyIfEnded(marker.dir, view.record);
      removeLiveMarkerOf(marker.dir);
    }
    this.views.set(marker.dir, view);
    return view;
  }

  /**
   * Not recorded yet (queued, starting or running), or recorded with its chain still to be handed over.
   * What a duplicate name is judged by.
   */
  async isLive(marker: LiveMarker): Promise<boolean> {
    const view = await this.view(marker);
    return view.state !== "recorded" || handOverPending(marker.dir, view.record);
  }

  /** Recorded attempts whose chain still has to be handed over (their markers say `handover`). */
  async pendingHandOvers(): Promise<string[]> {
    const dirs: string[] = [];
    for (const marker of this.markers) {
      if (marker.handover !== true) continue;
      const view = await this.view(marker);
      if (view.state === "recorded" && handOverPending(marker.dir, view.record)) dirs.push(marker.dir);
    }
    return dirs;
  }

  /** Whether this marker's dispatch waits in the queue, never promoted: judged by one stat, not a read. */
  private waitsUnpromoted(marker: LiveMarker): boolean {
    return (
      marker.queued !== undefined &&
      !fs.existsSync(fileIn(marker.dir, FILES.promoted)) &&
      !fs.existsSync(fileIn(marker.dir, FILES.exit))
    );
  }

  /** Whether the run has anything queued, or a chain to hand over (by the markers; no folder is read). */
  get hasQueue(): boolean {
    return this.markers.some((m) => m.queued !== undefined || m.handover === true);
  }

  /**
   * The dispatches that hold a slot: live and not queued. Also returns those found queued again because
   * their promoter died before their supervisor came up: they are to be promoted once more.
   */
  async slotsAndStranded(): Promise<{ slots: Slot[]; stranded: QueuedEntry[] }> {
    const slots: Slot[] = [];
    const stranded: QueuedEntry[] = [];
    for (const marker of this.markers) {
      if (this.waitsUnpromoted(marker)) continue;
      const view = await this.view(marker);
      if (view.state === "recorded") continue;
      if (view.state === "queued") {
        const entry = queuedEntry(marker, view.queued?.since ?? marker.queued?.since ?? "");
        if (entry !== null) stranded.push(entry);
        continue;
      }
      slots.push({
        name: marker.name,
        dispatchId: marker.dispatchId,
        backend: marker.backend ?? view.admit?.backend ?? null,
        owns: marker.owns,
      });
    }
    return { slots, stranded };
  }

  /** The dispatches waiting in the queue, never promoted, oldest first. */
  waiting(): QueuedEntry[] {
    const entries: QueuedEntry[] = [];
    for (const marker of this.markers) {
      if (!this.waitsUnpromoted(marker)) continue;
      const entry = queuedEntry(marker, marker.queued?.since ?? "");
      if (entry !== null) entries.push(entry);
    }
    return entries.sort(queueOrder);
  }
}

/** Oldest first; the id (creation time, then random) breaks a tie. */
export function queueOrder(a: { since: string; dispatchId: string }, b: typeof a): number {
  if (a.since !== b.since) return a.since < b.since ? -1 : 1;
  return a.dispatchId < b.dispatchId ? -1 : a.dispatchId > b.dispatchId ? 1 : 0;
}

function queuedEntry(marker: LiveMarker, since: string): QueuedEntry | null {
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
  };
}
