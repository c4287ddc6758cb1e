import * as fs from "node:fs";
import type { LockSight } from "../domain/state/supervisor-judgement.js";

// What a reader on any host sees of a proper-lockfile lock: whether it is there, and how long ago its
// holder last refreshed its mtime (by the reader's clock: hosts that share a folder keep their clocks in
// step, as Slurm's own credentials require).

/** The lock directory as seen now: missing, or held with the age of its mtime. */
export function sightOfLock(lockPath: string, nowMs: number): LockSight {
  try {
    return { kind: "held", ageMs: nowMs - fs.statSync(lockPath).mtimeMs };
  } catch {
    return { kind: "missing" };
  }
}
