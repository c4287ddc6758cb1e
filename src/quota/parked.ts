import * as fs from "node:fs";
import * as path from "node:path";
import { type ParkedFile, parkedFileSchema } from "../domain/quota/quota-schemas.js";
import { SCHEMA_VERSION } from "../domain/schema-version.js";
import { makeDir, writeJsonAtomic } from "../infra/atomic.js";
import { okValue, readJsonFile } from "../infra/json-file.js";
import { parkedDir, parkedFile } from "./home-files.js";

// The home's index of parked work (specs/quota.md, "At the reset"): one file per run that holds queued
// dispatches waiting for a time (an account's reset), naming the first such time. Written under the run's
// admission lock by whoever judged its queue; read by the waker and by any command that opens the home,
// which start what is due. A run's file is removed when nothing of it waits for a time.

/** A run that holds parked work, and when the first of it frees. */
export interface ParkedRun {
  run: string;
  untilMs: number;
}

/** Says that `run` holds work parked until `untilMs` (null: none any more). Under the run's lock. */
export function setParked(home: string, run: string, untilMs: number | null): void {
  const file = parkedFile(home, run);
  if (untilMs === null || !Number.isFinite(untilMs)) {
    fs.rmSync(file, { force: true });
    return;
  }
  const current = okValue(readJsonFile(file, parkedFileSchema));
  const until = new Date(untilMs).toISOString();
  if (current?.until === until) return;
  makeDir(path.dirname(file));
  const body: ParkedFile = { schema: SCHEMA_VERSION, run, until };
  writeJsonAtomic(file, body);
}

/** Says that `run` holds work parked until `untilMs` at the latest: the sooner of it and what is said. */
export function parkUntil(home: string, run: string, untilMs: number): void {
  const current = parkedOf(home, run);
  setParked(home, run, current === null ? untilMs : Math.min(current.untilMs, untilMs));
}

/** What the index says of `run`, or null. */
export function parkedOf(home: string, run: string): ParkedRun | null {
  const read = okValue(readJsonFile(parkedFile(home, run), parkedFileSchema));
  const untilMs = read === null ? Number.NaN : Date.parse(read.until);
  return Number.isFinite(untilMs) ? { run, untilMs } : null;
}

/** Every run the index names, sooner first; a home with none costs one failed directory read. */
export function parkedRuns(home: string): ParkedRun[] {
  let files: string[];
  try {
    files = fs.readdirSync(parkedDir(home));
  } catch {
    return [];
  }
  return files
    .filter((f) => f.endsWith(".json") && !f.startsWith("."))
    .map((f) => parkedOf(home, f.slice(0, -".json".length)))
    .filter((p): p is ParkedRun => p !== null)
    .sort((a, b) => a.untilMs - b.untilMs);
}
