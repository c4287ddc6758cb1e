import { isValidId } from "../domain/ids.js";
import { type LiveMarker, readLiveMarkers, removeLiveMarkerOf } from "../folder/markers.js";
import { dispatchDir, type RunPaths } from "../infra/paths.js";
import { inspectDispatch } from "./inspect.js";
import { settleIfDead } from "./settle.js";

/**
 * The run's admitted, not yet recorded dispatches, by their markers, with a lazy liveness check: only the
 * markers that could refuse a dispatch are inspected, so the time under the run's lock does not grow
 * with the number of live dispatches. A dead one found on the way is recorded `lost` first, then no
 * longer counts.
 */
export class LiveSet {
  readonly markers: LiveMarker[] = [];
  private readonly known = new Map<string, boolean>();

  constructor(run: RunPaths) {
    for (const marker of readLiveMarkers(run.live)) {
      // The folder is derived from the marker's ids, never taken from its `dir`: a hand-edited marker must
      // not make admission inspect, or record into, a folder outside this run.
      if (!isValidId(marker.name) || !isValidId(marker.dispatchId)) continue;
      this.markers.push({ ...marker, dir: dispatchDir(run, marker.name, marker.dispatchId) });
    }
  }

  async isLive(marker: LiveMarker): Promise<boolean> {
    const known = this.known.get(marker.dir);
    if (known !== undefined) return known;
    const view = await settleIfDead(inspectDispatch(marker.dir));
    const live = view.state !== "recorded";
    if (!live) removeLiveMarkerOf(marker.dir);
    this.known.set(marker.dir, live);
    return live;
  }

  async liveCount(): Promise<number> {
    let n = 0;
    for (const marker of this.markers) if (await this.isLive(marker)) n += 1;
    return n;
  }
}
