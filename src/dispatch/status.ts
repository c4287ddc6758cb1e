import { FILES } from "../folder/layout.js";
import { readFolderJson } from "../folder/read.js";
import { type Clock, systemClock } from "../infra/clock.js";
import type { RunPaths } from "../infra/paths.js";
import { listDispatchDirs } from "./read/locate.js";
import { queuePositions } from "./read/queued.js";
import { type DispatchRow, foldChains, liveRow, recordedRow } from "./read/rows.js";
import { promoteQuietly, readDispatches } from "./reader.js";

/**
 * Rows for every dispatch of a run, live ones first then newest first (`status`). The run is promoted once;
 * a recorded dispatch costs one file read (record.json); a live one is read through the reader gate — its
 * duties done — and reads its small files and activity.json, never its event stream.
 */
export async function overview(run: RunPaths, clock: Clock = systemClock): Promise<DispatchRow[]> {
  await promoteQuietly(run, clock, []);
  const positions = queuePositions(run);
  const rows: DispatchRow[] = [];
  const failoverFrom = new Map<string, string>();
  const liveDirs: string[] = [];
  for (const dir of listDispatchDirs(run)) {
    const record = readFolderJson(dir, FILES.record);
    if (record.kind !== "ok") {
      liveDirs.push(dir);
      continue;
    }
    rows.push(recordedRow(run, dir, record.value));
    if (record.value.failoverFrom != null)
      failoverFrom.set(record.value.dispatchId, record.value.failoverFrom);
  }
  // The live ones in one read: the engine is asked once about every placed job that needs it.
  for (const view of await readDispatches(liveDirs, { clock, promote: false })) {
    rows.push(liveRow(run, view, positions));
    if (view.admit?.failoverFrom != null) failoverFrom.set(view.dispatchId, view.admit.failoverFrom);
  }
  const live = (r: DispatchRow) => (r.state === "recorded" ? 1 : 0);
  return foldChains(rows, failoverFrom).sort((a, b) => live(a) - live(b));
}
