import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { loose } from "../domain/schemas.js";
import { writeJsonAtomic } from "../infra/atomic.js";
import { parseJsonText } from "../infra/json-file.js";

// <run>/live/<dispatchId>.json marks an admitted dispatch that has no record yet. It lets admission look
// at the live dispatches only, however many are recorded. The folders stay the truth: a marker whose
// dispatch has a record is stale and is removed by whoever sees it.

const liveMarkerSchema = loose({
  schema: z.literal(1),
  dispatchId: z.string(),
  name: z.string(),
  dir: z.string(),
  owns: z.array(z.string()),
});
export type LiveMarker = z.infer<typeof liveMarkerSchema>;

export function writeLiveMarker(liveDir: string, marker: Omit<LiveMarker, "schema">): void {
  writeJsonAtomic(path.join(liveDir, `${marker.dispatchId}.json`), { schema: 1, ...marker });
}

/** The markers of a run's live dispatches; unreadable ones are skipped (the folders remain the truth). */
export function readLiveMarkers(liveDir: string): LiveMarker[] {
  let names: string[];
  try {
    names = fs.readdirSync(liveDir);
  } catch {
    return [];
  }
  const markers: LiveMarker[] = [];
  for (const name of names) {
    if (!name.endsWith(".json") || name.startsWith(".")) continue;
    const file = path.join(liveDir, name);
    let text: string;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch {
      continue;
    }
    const read = parseJsonText(file, text, liveMarkerSchema);
    if (read.kind === "ok") markers.push(read.value);
  }
  return markers;
}

/** Removes the marker of a dispatch folder laid out as <run>/dispatches/<name>/<id>; best effort. */
export function removeLiveMarkerOf(dispatchDir: string): void {
  const id = path.basename(dispatchDir);
  const runDir = path.dirname(path.dirname(path.dirname(dispatchDir)));
  if (path.basename(path.dirname(path.dirname(dispatchDir))) !== "dispatches") return;
  fs.rmSync(path.join(runDir, "live", `${id}.json`), { force: true });
}
