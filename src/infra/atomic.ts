import * as fs from "node:fs";
import * as path from "node:path";
import { folderRefusal } from "./folder-refusal.js";

// Every state change is a whole file: write a temp file beside the target, fsync, rename (or link, for
// create-once files). Readers never see a torn file written by catherd.

/** Files 0600 and folders 0700 (specs/dispatch-folder.md), whatever the umask. */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

let tempCount = 0;

/**
 * A temp name no live process shares: our pid and a count of ours, with a random tail against a leftover of
 * a dead process that had our pid ("wx" refuses a clash rather than share a file). Math.random, not
 * node:crypto: nothing here needs to be unguessable, and loading node's crypto costs every start-up more
 * than all of catherd's writes (specs/performance.md, "What loading costs").
 */
function tempPathFor(target: string): string {
  const tail = Math.floor(Math.random() * 0x1_0000_0000).toString(16);
  return path.join(
    path.dirname(target),
    `.${path.basename(target)}.${process.pid}.${++tempCount}.${tail}.tmp`,
  );
}

function writeTemp(target: string, data: string | Uint8Array, sync = true): string {
  const temp = tempPathFor(target);
  const fd = fs.openSync(temp, "wx", FILE_MODE);
  try {
    fs.fchmodSync(fd, FILE_MODE);
    fs.writeFileSync(fd, data);
    if (sync) fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  return temp;
}

/**
 * Replaces `target` atomically with `data`. With `sync: false`, without the fsync: for a file rewritten
 * every second that anyone can work out again (after a crash of the machine it may hold an older version,
 * or nothing); readers still never see it torn.
 */
export function writeFileAtomic(
  target: string,
  data: string | Uint8Array,
  options: { sync?: boolean } = {},
): void {
  const temp = writeTemp(target, data, options.sync ?? true);
  try {
    fs.renameSync(temp, target);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * Creates `target` with `data` only if it does not exist, atomically: the content is complete before the
 * name appears. Returns false when the file already existed (someone else created it first). With
 * `sync: false` the data is not fsynced first: for a file that a power loss may leave torn, because its
 * reader knows what to make of one from before the boot (the slot queue).
 */
export function createFileExclusive(
  target: string,
  data: string | Uint8Array,
  options: { sync?: boolean } = {},
): boolean {
  const temp = writeTemp(target, data, options.sync ?? true);
  try {
    fs.linkSync(temp, target);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** Writes a JSON document atomically, pretty-printed so that a person can read it with `cat`. */
export function writeJsonAtomic(target: string, value: unknown, options: { sync?: boolean } = {}): void {
  writeFileAtomic(target, `${JSON.stringify(value, null, 2)}\n`, options);
}

export function createJsonExclusive(target: string, value: unknown): boolean {
  return createFileExclusive(target, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Creates a folder (and parents) with mode 0700 regardless of the umask. A refusal names its real cause
 * (folder-refusal.ts: a read-only home, a home that is a symbolic link to nowhere), not node's ENOENT.
 */
export function makeDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  } catch (error) {
    throw folderRefusal(dir, error);
  }
  fs.chmodSync(dir, DIR_MODE);
}

/** Appends one line to a log file (0600), best effort: diagnostics never break the caller. */
export function appendLine(file: string, line: string): void {
  try {
    fs.appendFileSync(file, `${line}\n`, { mode: FILE_MODE });
  } catch {
    // A full or read-only disk must not turn a diagnostic into a crash.
  }
}
