import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { MAX_TARGET_CHARS } from "../domain/placement.js";
import { accountAskSchema, backendIdSchema, loose } from "../domain/schemas.js";
import { ENGINES, QUEUE_BLOCKERS } from "../domain/vocab.js";
import { writeJsonAtomic } from "../infra/atomic.js";
import { parseJsonText } from "../infra/json-file.js";
import { liveMarkerFile, type RunPaths } from "../infra/paths.js";
import { FILES, fileIn, placeOf, runOf } from "./layout.js";

// Two markers about a dispatch that are not part of its story, only shortcuts for readers:
// - live: <run>/live/<dispatchId>.json marks an admitted dispatch that has no record yet, so that
//   admission looks at the live dispatches only, however many are recorded. The folders stay the truth: a
//   marker whose dispatch has a record is stale and is removed by whoever sees it. A dispatch admitted
//   queued carries `queued` (when it was queued, and not before when) until it is promoted; a marker that
//   still says queued for a promoted dispatch is only a hint that makes a reader look at its folder.
// - seen: <dir>/seen, left by `result` and `wait` once they delivered the record; `status` marks a record
//   without it as unread.

const liveMarkerSchema = loose({
  schema: z.literal(1),
  dispatchId: z.string(),
  name: z.string(),
  dir: z.string(),
  owns: z.array(z.string()),
  backend: backendIdSchema.optional(),
  /** The engine that runs its supervisor as a job (admit.json `placement`); absent: local. */
  engine: z.enum(ENGINES).optional(),
  /** The host its placement names (admit.json `placement.target`): what a host's cap counts. */
  host: z.string().max(MAX_TARGET_CHARS).optional(),
  /** Why it waits, as queued.json says (a shortcut: promotion rewrites both when the run's budget holds it). */
  queued: z
    .object({
      since: z.string(),
      notBefore: z.string().nullable(),
      blockedBy: z.enum(QUEUE_BLOCKERS).optional(),
      /** With `window` or `period-budget`: when it frees, as queued.json's blocker says. */
      until: z.string().nullable().optional(),
    })
    .optional(),
  /** Recorded, and its chain goes on: the next reader that promotes the run does the hand-over. */
  handover: z.boolean().optional(),
  /** The accounts it may run on (admit.json `account`): what promotion judges its windows by. */
  accounts: accountAskSchema.optional(),
  /** Its tags (admit.json `tags`): what the budgets by tag judge it by. */
  tags: z.array(z.string().max(40)).max(16).optional(),
  /** The account it runs on (account.json's name), once chosen: what a probing account counts. */
  account: z.string().optional(),
});
export type LiveMarker = z.infer<typeof liveMarkerSchema>;

export function writeLiveMarker(run: RunPaths, marker: Omit<LiveMarker, "schema">): void {
  writeJsonAtomic(liveMarkerFile(run, marker.dispatchId), { schema: 1, ...marker });
}

/** The markers of a run's live dispatches; unreadable ones are skipped (the folders remain the truth). */
export function readLiveMarkers(run: RunPaths): LiveMarker[] {
  let names: string[];
  try {
    names = fs.readdirSync(run.live);
  } catch {
    return [];
  }
  const markers: LiveMarker[] = [];
  for (const name of names) {
    if (!name.endsWith(".json") || name.startsWith(".")) continue;
    const file = path.join(run.live, name);
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

/** Removes the live marker of a dispatch folder laid out in a run; best effort, nothing for other folders. */
export function removeLiveMarkerOf(dir: string): void {
  const place = placeOf(dir);
  const run = runOf(dir);
  if (place === null || run === null) return;
  fs.rmSync(liveMarkerFile(run, place.dispatchId), { force: true });
}

/**
 * Marks a recorded attempt whose chain goes on (see folder/chain.ts) live: its marker stays until the
 * hand-over is done, holds no slot and no paths, keeps the name, and tells every reader that promotes the
 * run that there is a hand-over to do. Best effort: without it, the chain's readers still hand over as
 * they follow it (dispatch/reader.ts).
 */
export function markHandOver(dir: string, name: string, backend: LiveMarker["backend"]): void {
  const place = placeOf(dir);
  const run = runOf(dir);
  if (place === null || run === null) return;
  try {
    writeLiveMarker(run, {
      dispatchId: place.dispatchId,
      name,
      dir,
      owns: [],
      ...(backend === undefined ? {} : { backend }),
      handover: true,
    });
  } catch {
    // see above
  }
}

/** Marks a record as delivered to its reader, so that `status` stops showing it as unread. */
export function markSeen(dir: string, at: Date): void {
  try {
    fs.writeFileSync(fileIn(dir, FILES.seen), `${at.toISOString()}\n`, { mode: 0o600, flag: "w" });
  } catch {
    // Best effort: an unread mark is cosmetic.
  }
}

/** Whether a record was delivered by `result` or `wait`. */
export function isSeen(dir: string): boolean {
  return fs.existsSync(fileIn(dir, FILES.seen));
}
