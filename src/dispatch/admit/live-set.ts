import * as fs from "node:fs";
import { type Caps, ownsConflict, type Slot } from "../../domain/admission/admission-rules.js";
import type { BackendId } from "../../domain/vocab.js";
import { handOverPending } from "../../folder/chain.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { type LiveMarker, removeLiveMarkerOf } from "../../folder/markers.js";
import { notifyIfEnded } from "../../folder/notify.js";
import { waitsUnpromotedOnDisk } from "../../folder/queue-state.js";
import type { Clock } from "../../infra/clock.js";
import type { RunPaths } from "../../infra/paths.js";
import { type EngineSights, engineSights } from "../read/engine-sight.js";
import { type DispatchView, inspectDispatch } from "../read/inspect.js";
import { liveMarkersOf, type QueuedEntry, queuedEntry, waitingOf } from "../read/queued.js";

/**
 * Who asks for a slot, so that only the markers that could refuse it are read on disk: a dispatch being
 * admitted (its backend and absolute `--owns`), or `all` for a promotion, which weighs the whole queue.
 */
export type Asking = { backend: BackendId; owns: readonly string[]; host?: string | null } | "all";

/**
 * The run's admitted, not yet recorded dispatches, by their markers, as admission sees them under the
 * run's lock (specs/dispatch.md §2, step 2): liveness is judged, never acted on. Only the markers that
 * could refuse the dispatch asking are inspected on disk, so the time under the lock does not grow with
 * the number of live dispatches that could not refuse it, nor with the recorded ones. A dead dispatch
 * (lost, or ended without its record) counts as not live; an orphan whose agent runs holds its slot. What
 * a reader must do for them — record, adopt — is left for after the lock (`withDuties`). Dispatches
 * waiting in the queue cost one stat each: they hold no slot.
 */
export class LiveSet {
  readonly markers: LiveMarker[];
  private readonly views = new Map<string, DispatchView>();

  /**
   * `sights`: what the engine said of the placed dispatches' jobs, asked before the lock (engineSightsOf):
   * a placed dispatch not among them that cannot be judged by its files counts as live (state unknown).
   */
  constructor(
    readonly run: RunPaths,
    private readonly clock: Clock,
    readonly sights: EngineSights = new Map(),
  ) {
    this.markers = liveMarkersOf(run);
  }

  /** The folder as it is now, inspected once per LiveSet; a recorded one loses its stale marker. */
  view(marker: LiveMarker): DispatchView {
    const known = this.views.get(marker.dir);
    if (known !== undefined) return known;
    const view = inspectDispatch(marker.dir, { clock: this.clock, job: this.sights.get(marker.dir) ?? null });
    if (view.state === "recorded" && !handOverPending(marker.dir, view.record)) {
      // A stale marker: its recorder may have died before the notification was started.
      notifyIfEnded(marker.dir, view.record);
      removeLiveMarkerOf(marker.dir);
    }
    this.views.set(marker.dir, view);
    return view;
  }

  /**
   * Not recorded yet and not dead (queued, starting, running, stopping, orphaned, or ended with its
   * supervisor still writing), or recorded with its chain still to be handed over. What a duplicate name
   * is judged by.
   */
  isLive(marker: LiveMarker): boolean {
    const view = this.view(marker);
    if (view.state === "recorded") return handOverPending(marker.dir, view.record);
    return view.duty !== "record";
  }

  /** The folders inspected so far that a reader must act on (record, adopt): the caller's, after the lock. */
  withDuties(): string[] {
    return [...this.views.values()].filter((v) => v.duty !== null).map((v) => v.dir);
  }

  /** Recorded attempts whose chain still has to be handed over: their markers say `handover`. */
  pendingHandOvers(): string[] {
    return this.markers
      .filter((m) => m.handover === true)
      .filter((m) => {
        const view = this.view(m);
        return view.state === "recorded" && handOverPending(m.dir, view.record);
      })
      .map((m) => m.dir);
  }

  /** Whether this marker's dispatch waits in the queue, never promoted: judged by stats, not a read. */
  private waitsUnpromoted(marker: LiveMarker): boolean {
    return marker.queued !== undefined && waitsUnpromotedOnDisk(marker.dir, true);
  }

  /** Whether the run has anything queued, or a chain to hand over (by the markers; no folder is read). */
  get hasQueue(): boolean {
    return this.markers.some((m) => m.queued !== undefined || m.handover === true);
  }

  /**
   * The dispatches that hold a slot: live and not queued. Also returns those found queued again because
   * their promoter died before their supervisor came up: they are to be promoted once more. A marker that
   * could not refuse `asking` under `caps` is counted as a slot without reading its folder — whether it is
   * live or not cannot change the decision — unless it may be such a stranded promotion (promoted.json
   * without supervisor.json: two stats) or is stale (record.json: one stat).
   */
  slotsAndStranded(asking: Asking, caps: Caps): { slots: Slot[]; stranded: QueuedEntry[] } {
    const holding = this.markers.filter((m) => !this.waitsUnpromoted(m) && m.handover !== true);
    const mustRead = couldRefuse(asking, caps, holding);
    const slots: Slot[] = [];
    const stranded: QueuedEntry[] = [];
    for (const marker of holding) {
      if (!mustRead(marker) && !mayBeStranded(marker) && !isRecorded(marker)) {
        slots.push(slotOf(marker, null));
        continue;
      }
      const view = this.view(marker);
      if (view.state === "recorded" || view.duty === "record") continue;
      // Queued again (its promoter died before it started); one pending in its engine's queue holds a slot.
      if (view.state === "queued" && view.placement === null) {
        stranded.push(queuedEntry(marker, view.queued?.since ?? marker.queued?.since ?? ""));
        continue;
      }
      slots.push(slotOf(marker, view));
    }
    return { slots, stranded };
  }

  /** The dispatches waiting in the queue, never promoted, oldest first. */
  waiting(): QueuedEntry[] {
    return waitingOf(this.markers);
  }
}

function slotOf(marker: LiveMarker, view: DispatchView | null): Slot {
  return {
    name: marker.name,
    dispatchId: marker.dispatchId,
    backend: marker.backend ?? view?.admit?.backend ?? null,
    owns: marker.owns,
    account: marker.account ?? null,
    host: marker.host ?? null,
  };
}

/**
 * Which markers could refuse `asking`: those whose `--owns` overlap its own, all of them when the run has
 * a cap and holds at least that many, and those of its backend (its host) when its backend's (its host's)
 * cap is reached by them.
 */
function couldRefuse(asking: Asking, caps: Caps, holding: readonly LiveMarker[]): (m: LiveMarker) => boolean {
  if (asking === "all") return () => true;
  if (caps.maxParallel !== null && holding.length >= caps.maxParallel) return () => true;
  const backendCap = caps.perBackend[asking.backend];
  const backendFull =
    backendCap !== undefined && holding.filter((m) => m.backend === asking.backend).length >= backendCap;
  const host = asking.host ?? null;
  const hostCap = host === null ? undefined : caps.perHost[host];
  const hostFull = hostCap !== undefined && holding.filter((m) => m.host === host).length >= hostCap;
  return (m) =>
    (backendFull && m.backend === asking.backend) ||
    (hostFull && m.host === host) ||
    ownsConflict(asking, m) !== null;
}

/**
 * A stale marker: its dispatch is recorded (one stat). Reading it drops the marker, and starts the
 * notification a recorder that died before it left due (folder/notify.ts).
 */
function isRecorded(marker: LiveMarker): boolean {
  return fs.existsSync(fileIn(marker.dir, FILES.record));
}

/** A promotion whose promoter may have died before its supervisor came up: worth reading its folder. */
function mayBeStranded(marker: LiveMarker): boolean {
  return (
    fs.existsSync(fileIn(marker.dir, FILES.promoted)) && !fs.existsSync(fileIn(marker.dir, FILES.supervisor))
  );
}

/**
 * What the engine says of the jobs of the run's placed live dispatches (their markers say so), asked
 * before the run's lock is taken, so that no engine call is made under it; nothing for a run without any.
 */
export function engineSightsOf(run: RunPaths, clock: Clock): Promise<EngineSights> {
  const placed = liveMarkersOf(run).filter((m) => m.engine !== undefined);
  return engineSights(
    placed.map((m) => m.dir),
    clock,
  );
}
