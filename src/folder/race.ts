import * as fs from "node:fs";
import * as path from "node:path";
import { isValidId } from "../domain/ids.js";
import {
  type DecisionFile,
  decisionFileSchema,
  type RaceFile,
  type RecordFile,
  raceFileSchema,
  SCHEMA_VERSION,
} from "../domain/schemas.js";
import { createJsonExclusive, makeDir, writeFileAtomic, writeJsonAtomic } from "../infra/atomic.js";
import { okValue, readJsonFile } from "../infra/json-file.js";
import { dispatchDir, LATEST_FILE, nameDir, type RunPaths } from "../infra/paths.js";
import { attemptDirs, handOverPending } from "./chain.js";
import { FILES } from "./layout.js";
import { readFolderJson } from "./read.js";

// A race's files (specs/dispatch-folder.md, "A race's files"): `<run>/races/<name>/<raceId>/race.json`,
// written at admission, and decision.json, created once by the first that finds the race decided;
// `<run>/races/<name>/latest` names the newest race of the name. What each attempt did is read from its
// own folders: an attempt is its chain (a repair turn is a chain's next attempt), followed to its end.

/** `<run>/races`. */
export function racesDir(run: RunPaths): string {
  return path.join(run.dir, "races");
}

/** The folder of one race: `<run>/races/<name>/<raceId>`. */
export function raceDir(run: RunPaths, name: string, raceId: string): string {
  return path.join(racesDir(run), name, raceId);
}

/** Writes race.json (under the run's lock, before its attempts are committed) and the name's `latest`. */
export function writeRaceFile(run: RunPaths, race: RaceFile): string {
  const dir = raceDir(run, race.name, race.raceId);
  makeDir(dir);
  writeJsonAtomic(path.join(dir, "race.json"), race);
  writeFileAtomic(path.join(racesDir(run), race.name, LATEST_FILE), `${race.raceId}\n`);
  return dir;
}

/** Removes a race whose attempts were not admitted after all (refused under the lock). */
export function discardRace(run: RunPaths, race: Pick<RaceFile, "name" | "raceId">): void {
  fs.rmSync(raceDir(run, race.name, race.raceId), { recursive: true, force: true });
}

/** A race as read: its folder and race.json. */
export interface RaceRead {
  dir: string;
  race: RaceFile;
}

/** The newest race named `name` in the run, or null (no such race, or its files unreadable). */
export function readRace(run: RunPaths, name: string): RaceRead | null {
  if (!isValidId(name)) return null;
  let raceId: string;
  try {
    raceId = fs.readFileSync(path.join(racesDir(run), name, LATEST_FILE), "utf8").trim();
  } catch {
    return null;
  }
  return readRaceById(run, name, raceId);
}

/** The race `raceId` of the name, as an attempt's admit.json names it; null when it cannot be read. */
export function readRaceById(run: RunPaths, name: string, raceId: string): RaceRead | null {
  if (!isValidId(name) || !isValidId(raceId)) return null;
  const dir = raceDir(run, name, raceId);
  const race = okValue(readJsonFile(path.join(dir, "race.json"), raceFileSchema));
  return race === null ? null : { dir, race };
}

/**
 * The newest race named `ref` in the run, or null: none, or a dispatch of that very name admitted after it
 * (a name is the newest thing that bears it, as for a dispatch's turns).
 */
export function findRace(run: RunPaths, ref: string): RaceRead | null {
  if (!isValidId(ref)) return null;
  const read = readRace(run, ref);
  if (read === null) return null;
  const latest = latestDispatchId(run, ref);
  return latest !== null && latest > read.race.raceId ? null : read;
}

function latestDispatchId(run: RunPaths, name: string): string | null {
  try {
    const id = fs.readFileSync(path.join(nameDir(run, name), LATEST_FILE), "utf8").trim();
    return isValidId(id) ? id : null;
  } catch {
    return null;
  }
}

/** decision.json of a race, or null while none is written. */
export function readDecision(dir: string): DecisionFile | null {
  return okValue(readJsonFile(path.join(dir, "decision.json"), decisionFileSchema));
}

/**
 * Writes the race's decision once: created exclusively, so that of the supervisors and readers who find it
 * decided at once only the first writes, and a record landing later cannot change it. Returns the
 * decision on disk: this one, or the one written first.
 */
export function freezeDecision(dir: string, decision: Omit<DecisionFile, "schema">): DecisionFile {
  const body: DecisionFile = { schema: SCHEMA_VERSION, ...decision };
  if (createJsonExclusive(path.join(dir, "decision.json"), body)) return body;
  return readDecision(dir) ?? body;
}

/**
 * How the check of a record went (record.json `verify`, specs/record.md): passed, its runs over the chain,
 * or null when the record has none (no check asked).
 */
export function checkOf(record: RecordFile): { passed: boolean | null; runs: number } | null {
  const check = record.verify;
  return check === undefined ? null : { passed: check.passed, runs: check.runs.length };
}

/** One turn of an attempt's chain, as its folder holds it. */
export interface Turn {
  dir: string;
  record: RecordFile | null;
  /** Why this turn came after the one before it (its record's `next.why`), null for the first. */
  why: string | null;
}

/** The turns of the attempt whose first dispatch is `first`: its chain, first to last. */
export function turnsOf(run: RunPaths, attempt: RaceFile["attempts"][number]): Turn[] {
  const first = dispatchDir(run, attempt.name, attempt.dispatchId);
  let why: string | null = null;
  return attemptDirs(first).map((dir) => {
    const record = okValue(readFolderJson(dir, FILES.record));
    const turn = { dir, record, why };
    why = record?.next?.why ?? null;
    return turn;
  });
}

/** Whether an attempt's chain has ended: its last turn is recorded and hands over to nothing. */
export function turnsEnded(turns: readonly Turn[]): boolean {
  const last = turns.at(-1);
  return last?.record != null && !handOverPending(last.dir, last.record);
}

/**
 * Removes the races none of whose attempts' folders remain (`catherd clean` removed them), and a name's
 * `latest` naming a removed race; under the run's admission lock, where races are written. Best effort.
 */
export function removeRacesWithoutAttempts(run: RunPaths): void {
  const root = racesDir(run);
  for (const name of listed(root)) {
    if (!isValidId(name)) continue;
    for (const raceId of listed(path.join(root, name))) {
      if (raceId === LATEST_FILE || !isValidId(raceId)) continue;
      const read = readRaceById(run, name, raceId);
      const left = read?.race.attempts.some((a) => fs.existsSync(dispatchDir(run, a.name, a.dispatchId)));
      if (read !== null && left !== true)
        fs.rmSync(raceDir(run, name, raceId), { recursive: true, force: true });
    }
    const latest = path.join(root, name, LATEST_FILE);
    const id = readLatestId(latest);
    if (id !== null && !fs.existsSync(raceDir(run, name, id))) fs.rmSync(latest, { force: true });
    removeIfEmpty(path.join(root, name));
  }
  removeIfEmpty(root);
}

function listed(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function readLatestId(file: string): string | null {
  try {
    const id = fs.readFileSync(file, "utf8").trim();
    return isValidId(id) ? id : null;
  } catch {
    return null;
  }
}

function removeIfEmpty(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // not empty, or gone
  }
}

/**
 * For a name that is a race's rather than a dispatch's: "fix is a race of 3 attempts (fix.1, fix.2,
 * fix.3)", so that a verb that takes one dispatch says what the name is; null when it is no race.
 */
export function raceNamed(run: RunPaths, ref: string): string | null {
  const read = findRace(run, ref);
  if (read === null) return null;
  const names = read.race.attempts.map((a) => a.name);
  return `${ref} is a race of ${names.length} attempts (${names.join(", ")})`;
}
