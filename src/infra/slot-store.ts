import * as fs from "node:fs";
import * as path from "node:path";
import { CatherdError } from "../domain/errors.js";
import { LOCK_FILE_SCHEMAS, slotStateOf } from "../domain/lock/lock-schemas.js";
import { EMPTY_SLOTS, type SlotState } from "../domain/lock/slots.js";
import { SCHEMA_VERSION } from "../domain/schemas.js";
import { createFileExclusive, makeDir } from "./atomic.js";
import type { Clock } from "./clock.js";
import { watchFolder } from "./folder-watch.js";
import { readJsonFile } from "./json-file.js";
import { bootTimeMs } from "./slot-identity.js";
import type { WakeSource } from "./wait-until.js";

// A lock class's queue on disk (specs/lock.md, "The slot store"): `<home>/locks/<class>/state.<n>.json`,
// one file per version, each created exclusively (written whole, then linked into place: two writers
// cannot both make version n + 1). The newest version is the queue. A change reads version n, computes
// the next state and creates n + 1; whoever loses the race reads again. No lock to hold, none to go
// stale, nothing a SIGKILL can leave half done.
//
// Versions are not fsynced: a crowd's changes would queue behind the disk, and only a power loss can
// tear a file — after which every claim in it is from an earlier boot, dead. A newest version that is
// torn and older than this boot is therefore read as an empty queue.
//
// Old versions are removed once KEPT_VERSIONS newer ones exist. A writer that stalled for that many
// changes can then create a version number that was removed; its file is older than the newest and
// nobody reads it. So that no such write is taken for done, every change says what it looks like when
// it is done (`done`), and is checked against the newest version afterwards: a write that was not kept is
// simply made again, on the queue as it is now.

/** Versions kept behind the newest, for readers and writers that are a few changes behind. */
const KEPT_VERSIONS = 8;
const VERSION_FILE = /^state\.(\d+)\.json$/;
/** A temp file of `createFileExclusive` (`.state.<n>.json.<pid>.<count>.<hex>.tmp`) a writer left. */
const TEMP_FILE = /^\.state\.\d+\.json\.\d+\.\d+\.[0-9a-f]+\.tmp$/;
/**
 * A temp file this old is a writer's that died: a live one holds its temp for the milliseconds of one
 * write. Judged by age, not by the pid in its name: a writer in a sandbox numbers itself in a PID
 * namespace of its own, where pid 9 is not this side's pid 9.
 */
const ORPHAN_TEMP_MS = 60_000;
/** How often a read retries a version removed between listing the folder and opening the file. */
const READ_ATTEMPTS = 20;

/** The folder of a class's queue under a home. */
export function slotClassDir(home: string, cls: string): string {
  return path.join(home, "locks", cls);
}

/** The classes that have a queue under a home, sorted. */
export function slotClasses(home: string): string[] {
  const root = path.join(home, "locks");
  try {
    return fs
      .readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw unreadable(root, error);
  }
}

/** One version of a class's queue. */
export interface SlotVersion {
  version: number;
  state: SlotState;
  /** The file it was read from (null for the empty queue of a class nobody used yet). */
  file: string | null;
}

/**
 * The newest version of the queue in `dir`: the empty queue when the folder or its files do not exist
 * yet. A folder that cannot be read is E_IO_READ, a version that is torn or hand-broken E_FILE_CORRUPT,
 * one of a newer catherd E_SCHEMA_NEWER, each naming the path: never an empty queue in their place.
 */
export function readSlots(dir: string): SlotVersion {
  for (let attempt = 0; ; attempt++) {
    const version = newestVersion(dir);
    if (version === 0) return { version: 0, state: EMPTY_SLOTS, file: null };
    const file = versionFile(dir, version);
    const read = readJsonFile(file, LOCK_FILE_SCHEMAS["lock-state.json"]);
    if (read.kind === "ok") return { version, state: slotStateOf(read.value), file };
    // Removed between the listing and the read: newer versions exist, read again.
    if (read.kind === "missing" && attempt < READ_ATTEMPTS) continue;
    if (read.kind === "invalid" && read.error.code === "E_FILE_CORRUPT" && fromEarlierBoot(file)) {
      return { version, state: EMPTY_SLOTS, file };
    }
    if (read.kind === "missing") throw unreadable(file, new Error("removed while being read"));
    throw new CatherdError(read.error.code, read.error.message, {
      fix: `inspect it with: cat ${file}; once no catherd lock of this class runs, remove its queue: rm -r ${dir}`,
      cause: read.error,
      file,
    });
  }
}

/** A change of the queue: the next state from the current one, or null when there is nothing to write. */
export type SlotChange = (current: SlotState) => SlotState | null;

/** A class's queue as a writer knows it: its folder, its class, the clock its back-off sleeps on. */
export interface SlotQueue {
  dir: string;
  cls: string;
  clock: Clock;
}

/**
 * Applies `change` to the newest version until `done` holds of the queue (checked first: a change already
 * made is not made again), or until `change` has nothing to write. Resolves to the queue as last read or
 * written. A writer that loses a race backs off a few jittered milliseconds and reads again.
 */
export async function updateSlots(
  { dir, cls, clock }: SlotQueue,
  change: SlotChange,
  done: (state: SlotState) => boolean,
): Promise<SlotState> {
  makeDir(dir);
  for (let lost = 0; ; ) {
    const current = readSlots(dir);
    if (done(current.state)) return current.state;
    const next = change(current.state);
    if (next === null) return current.state;
    const version = current.version + 1;
    // Most lost races are seen before the write: someone made this version while we computed ours.
    const file = versionFile(dir, version);
    if (
      !fs.existsSync(file) &&
      createFileExclusive(file, `${JSON.stringify(fileOf(cls, next), null, 2)}\n`, { sync: false })
    ) {
      removeOld(dir, version);
      continue; // checked by `done` on the newest version: a write that was not kept is made again
    }
    lost += 1;
    await clock.sleep(Math.random() * Math.min(2 * lost, 20));
  }
}

/** Wakes a wait when a new version of the queue in `dir` appears (fs.watch; the poll covers the rest). */
export function watchSlots(dir: string): WakeSource {
  return (wake) => {
    const watch = watchFolder(dir, (name) => VERSION_FILE.test(name), wake);
    return () => watch?.close();
  };
}

function fileOf(cls: string, state: SlotState) {
  return {
    schema: SCHEMA_VERSION,
    class: cls,
    nextTicket: state.nextTicket,
    slots: state.slots,
    holders: state.holders,
    waiters: state.waiters,
  };
}

function versionFile(dir: string, version: number): string {
  return path.join(dir, `state.${version}.json`);
}

/** Whether a file was last written before this boot (only a power loss can have torn it). */
function fromEarlierBoot(file: string): boolean {
  const booted = bootTimeMs();
  if (booted === null) return false;
  try {
    return fs.statSync(file).mtimeMs < booted;
  } catch {
    return false;
  }
}

function newestVersion(dir: string): number {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw unreadable(dir, error);
  }
  let newest = 0;
  for (const name of names) {
    const m = VERSION_FILE.exec(name);
    if (m !== null) newest = Math.max(newest, Number(m[1]));
  }
  return newest;
}

/** Whether `file` was last written more than `ms` ago (false when it is gone). */
function olderThan(file: string, ms: number): boolean {
  try {
    return Date.now() - fs.statSync(file).mtimeMs > ms;
  } catch {
    return false;
  }
}

/** Removes the versions KEPT_VERSIONS behind `version`, and temp files of writers that died. Best effort. */
function removeOld(dir: string, version: number): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const v = VERSION_FILE.exec(name);
    const temp = v === null ? TEMP_FILE.exec(name) : null;
    const old = v !== null && Number(v[1]) <= version - KEPT_VERSIONS;
    const orphan = temp !== null && olderThan(path.join(dir, name), ORPHAN_TEMP_MS);
    if (old || orphan) fs.rmSync(path.join(dir, name), { force: true });
  }
}

function unreadable(file: string, error: unknown): CatherdError {
  const message = error instanceof Error ? error.message : String(error);
  return new CatherdError("E_IO_READ", `cannot read the slot queue ${file}: ${message}`, {
    fix: `inspect it with: ls -ld ${file}`,
    cause: error,
    file,
  });
}
