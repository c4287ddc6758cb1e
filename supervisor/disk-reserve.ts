import * as fs from "node:fs";
import { FILES, fileIn } from "../src/folder/layout.js";
import type { JsonWriter } from "../src/folder/write.js";
import { FILE_MODE } from "../src/infra/atomic.js";
import { diskFullCodeOf } from "../src/infra/disk-space.js";
import type { SupervisorLog } from "./log.js";

// The supervisor's room on a full disk (specs/supervisor.md, "A full disk"): a file of RESERVE_BYTES made
// before the agent starts, whose blocks exit.json is written into when nothing else can be written, and
// which is given back to the file system once the dispatch is recorded.

/**
 * Enough for exit.json (a few KiB) with room to spare, which the truncation gives back for record.json.
 * Small beside the output of any agent.
 */
export const RESERVE_BYTES = 128 * 1024;

/**
 * Makes the reserve: RESERVE_BYTES of bytes no file system can compress or share away, so that its blocks
 * are really held. Throws what the disk says (ENOSPC: there is no room to start with).
 */
export function makeReserve(dir: string): void {
  const file = fileIn(dir, FILES.diskReserve);
  const bytes = new Uint8Array(RESERVE_BYTES);
  const words = new Uint32Array(bytes.buffer);
  // Math.random, not node:crypto: nothing here needs to be unguessable, only incompressible.
  for (let i = 0; i < words.length; i++) words[i] = Math.floor(Math.random() * 0x1_0000_0000);
  try {
    fs.writeFileSync(file, bytes, { mode: FILE_MODE });
  } catch (error) {
    fs.rmSync(file, { force: true });
    throw error;
  }
}

/** Whether the folder holds a reserve (an adopter finds its first supervisor's). */
export function hasReserve(dir: string): boolean {
  return fs.existsSync(fileIn(dir, FILES.diskReserve));
}

/** Gives the reserve back to the file system; nothing when there is none. */
export function releaseReserve(dir: string): void {
  fs.rmSync(fileIn(dir, FILES.diskReserve), { force: true });
}

/**
 * Runs `write`; when the disk refuses it for want of room and the folder still holds its reserve, gives the
 * reserve back and runs it once more. The agent is stopped by then: the room freed is the dispatch's.
 */
export async function withRoom<T>(dir: string, log: SupervisorLog, what: string, write: () => Promise<T>) {
  try {
    return await write();
  } catch (error) {
    if (diskFullCodeOf(error) === null || !hasReserve(dir)) throw error;
    releaseReserve(dir);
    log("reserve-released", { for: what });
    return await write();
  }
}

/**
 * A writer that puts a JSON file into the reserve's blocks — written over in place, which needs no new
 * block — then cuts the reserve to its length and gives it the file's name (a link, then the reserve's
 * name removed: a rename needs no block either). Throws when the folder has no reserve.
 */
export function reserveWriter(dir: string): JsonWriter {
  const reserve = fileIn(dir, FILES.diskReserve);
  const intoReserve = (file: string, value: unknown, exclusive: boolean): boolean => {
    const data = Buffer.from(`${JSON.stringify(value, null, 2)}\n`);
    if (data.length > RESERVE_BYTES) throw new RangeError(`${file} is larger than the disk reserve`);
    const fd = fs.openSync(reserve, "r+");
    try {
      fs.writeSync(fd, data, 0, data.length, 0);
      fs.ftruncateSync(fd, data.length);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    if (!exclusive) {
      fs.renameSync(reserve, file);
      return true;
    }
    try {
      fs.linkSync(reserve, file);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw error;
    } finally {
      fs.rmSync(reserve, { force: true });
    }
  };
  return {
    writeJson: (file, value) => {
      intoReserve(file, value, false);
    },
    createJson: (file, value) => intoReserve(file, value, true),
  };
}

/**
 * Leaves `disk-full` (empty: a name needs no block) for the reader that records the dispatch: the
 * supervisor met a full disk and could not write exit.json. Best effort.
 */
export function markDiskFull(dir: string): void {
  try {
    fs.closeSync(fs.openSync(fileIn(dir, FILES.diskFull), "a", FILE_MODE));
  } catch {
    // Not even an inode: the reader then finds the disk full by itself (statfs).
  }
}
