import * as fs from "node:fs";
import * as path from "node:path";
import { type Caps, choosePromotions, type OwnsConflict, type Slot } from "../domain/admission.js";
import { type RunFile, runFileSchema } from "../domain/schemas.js";
import { writeEndedExit } from "../folder/exit.js";
import { FILES, type FolderPlace, fileIn, placeOf } from "../folder/layout.js";
import { writeLiveMarker } from "../folder/markers.js";
import { writeRecord } from "../folder/record.js";
import { createFolderJson, writeFolderJson } from "../folder/write.js";
import { hostIdentity } from "../infra/host-identity.js";
import { readJsonFile } from "../infra/json-file.js";
import { type RunPaths, runPaths } from "../infra/paths.js";
import { startTimeOf } from "../infra/process-identity.js";
import { underAdmissionLock } from "./admission-lock.js";
import { handOverUnderLock } from "./hand-over.js";
import { type DispatchView, inspectDispatch } from "./inspect.js";
import { launchSupervisor } from "./launch.js";
import { LiveSet, queueOrder } from "./live-set.js";
import { firstOverlap } from "./owns.js";
import type { StandbySupervisor } from "./standby.js";

// The queue of a run (specs/dispatch.md, "The queue"). No daemon keeps it: whoever touches the run —
// a dispatcher, a supervisor that has just written its record, any command that reads the run — takes the
// admission lock, starts the oldest queued dispatches that nothing blocks, and lets the lock go. A queued
// dispatch is started once: it is chosen under the lock and marked by promoted.json, created exclusively,
// before its supervisor is launched; its supervisor's own lock is the last guard.

/** An overlapping `--owns` between a dispatch asking to start and one holding a slot. */
export const ownsConflict: OwnsConflict = (candidate, slot) => firstOverlap(candidate.owns, slot.owns);

/** The caps remembered for the run in run.json; none when it is missing or unreadable. */
export function capsOf(runFile: RunFile | null): Caps {
  return { maxParallel: runFile?.maxParallel ?? null, perBackend: runFile?.maxParallelBackend ?? {} };
}

export function readRunFile(run: RunPaths): RunFile | null {
  const read = readJsonFile(run.runFile, runFileSchema);
  return read.kind === "ok" ? read.value : null;
}

/**
 * Under the admission lock (held by the caller): chooses the queued dispatches that start now and marks
 * each promoted. Returns the slots held afterwards (for an admission that follows) and the folders whose
 * supervisors the caller must launch once the lock is released. A queued dispatch whose `cancel` file
 * exists is recorded cancelled instead of started.
 */
export async function promoteUnderLock(
  given: LiveSet,
  caps: Caps,
  now: Date,
): Promise<{ slots: Slot[]; toLaunch: string[] }> {
  const { live, started } = await handOverChains(given, caps, now);
  const { slots, stranded } = await live.slotsAndStranded();
  if (!live.hasQueue && stranded.length === 0) return { slots, toLaunch: started };
  const queue = [...live.waiting(), ...stranded].sort(queueOrder);
  const strandedDirs = new Set(stranded.map((q) => q.marker.dir));
  const held = [...slots];
  const toLaunch: string[] = [...started];
  for (const q of choosePromotions(queue, slots, caps, now.getTime(), ownsConflict)) {
    const dir = q.marker.dir;
    if (fs.existsSync(fileIn(dir, FILES.cancel))) {
      await recordCancelledWhileQueued(dir);
      continue;
    }
    const promoted = {
      at: now.toISOString(),
      by: { pid: process.pid, startTime: startTimeOf(process.pid), host: hostIdentity() },
    };
    // A stranded promotion (its promoter died before the supervisor came) is taken over; a fresh one is
    // created exclusively, so a promoter that somehow raced past the lock cannot promote it twice.
    if (strandedDirs.has(dir)) writeFolderJson(dir, FILES.promoted, promoted);
    else if (!createFolderJson(dir, FILES.promoted, promoted)) continue;
    const { queued: _queued, schema: _schema, ...rest } = q.marker;
    writeLiveMarker(live.runLive, rest);
    held.push(q);
    toLaunch.push(dir);
  }
  return { slots: held, toLaunch };
}

/**
 * First in every promotion: the chains whose last attempt was recorded with a `next` are handed over
 * (dispatch/hand-over.ts), so that a next attempt takes its place in the queue before anything is chosen.
 * Returns the live set as it is afterwards and the attempts admitted to start now.
 */
async function handOverChains(
  live: LiveSet,
  caps: Caps,
  now: Date,
): Promise<{ live: LiveSet; started: string[] }> {
  const pending = await live.pendingHandOvers();
  if (pending.length === 0) return { live, started: [] };
  const started: string[] = [];
  let current = live;
  for (const dir of pending) {
    const { slots } = await current.slotsAndStranded();
    const toLaunch = await handOverUnderLock(current.run, dir, slots, caps, now);
    if (toLaunch !== null) started.push(toLaunch);
    current = new LiveSet(current.run);
  }
  return { live: current, started };
}

/**
 * Starts the supervisors of promoted dispatches, at once. One that does not come up is recorded `lost` by
 * launchSupervisor; the others go on.
 */
export async function launchPromoted(
  dirs: readonly string[],
  standby: StandbySupervisor | null = null,
): Promise<void> {
  await Promise.all(
    dirs.map((dir, i) => launchSupervisor(dir, { standby: i === 0 ? standby : null }).catch(() => null)),
  );
}

/**
 * Promotion as any process that touches a run does it: nothing when the run has nothing queued (its live
 * markers say so, no lock taken); else under the admission lock, then the launches.
 */
export async function promoteRun(
  run: RunPaths,
  {
    now = () => new Date(),
    standby = null,
    force = false,
  }: { now?: () => Date; standby?: StandbySupervisor | null; force?: boolean } = {},
): Promise<number> {
  if (!force && !new LiveSet(run).hasQueue) return 0;
  const { toLaunch } = await underAdmissionLock(run, () =>
    promoteUnderLock(new LiveSet(run), capsOf(readRunFile(run)), now()),
  );
  await launchPromoted(toLaunch, standby);
  return toLaunch.length;
}

/**
 * Promotion by a reader: for the run `dir` sits in (none for a folder outside a home), best effort — a
 * reader reports what it reads even when the lock is busy past its wait or a launch fails; the next one
 * promotes again.
 */
export async function promoteRunOf(dir: string, { force = false }: { force?: boolean } = {}): Promise<void> {
  const place = placeOf(dir);
  if (place === null) return;
  await promoteRun(runPathsOfPlace(place), { force }).catch(() => 0);
}

/**
 * `cancel` of a queued dispatch: under the admission lock, so that it is either still queued and recorded
 * cancelled here — never started — or already promoted, and then cancelled as any live dispatch is. Returns
 * the view after, or null when it was no longer queued.
 */
export async function cancelQueued(run: RunPaths, dir: string): Promise<DispatchView | null> {
  return underAdmissionLock(run, async () => {
    if (inspectDispatch(dir).state !== "queued") return null;
    await recordCancelledWhileQueued(dir);
    return inspectDispatch(dir);
  });
}

async function recordCancelledWhileQueued(dir: string): Promise<void> {
  writeEndedExit(dir, {
    reason: "cancelled",
    error: { code: "cancelled", message: "cancelled while queued: it never started" },
  });
  await writeRecord(dir);
}

/** queuePositions for the run of a folder's place. */
export function queuePositionsOf(place: FolderPlace): Map<string, number> {
  return queuePositions(runPathsOfPlace(place));
}

/** The run a folder's place is in. */
export function runPathsOfPlace(place: FolderPlace): RunPaths {
  return runPaths(path.dirname(path.dirname(place.runDir)), place.run);
}

/** The 1-based place of each never-promoted queued dispatch of the run, by dispatch id. */
export function queuePositions(run: RunPaths): Map<string, number> {
  const positions = new Map<string, number>();
  for (const [i, q] of new LiveSet(run).waiting().entries()) positions.set(q.dispatchId, i + 1);
  return positions;
}
