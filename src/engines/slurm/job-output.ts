import * as fs from "node:fs";
import * as path from "node:path";
import { parseStepdNotice, type StepdNotice } from "./output.js";

// The engine's last words in a job's output file: slurmstepd writes `*** JOB 4 ON vm CANCELLED AT …
// DUE TO TIME LIMIT ***` there when the engine ends the job. The file is in the dispatch folder on shared
// storage, so the words outlive the controller's memory of the job in a cluster without accounting.

/** The job's own output in its dispatch folder: its batch script's stdout and stderr, and the engine's notices. */
export const JOB_OUTPUT_FILE = "slurm.out";

/** The job output file of the dispatch folder `dir`. */
export function jobOutputIn(dir: string): string {
  return path.join(dir, JOB_OUTPUT_FILE);
}

/** How much of the file's end is read: the notice is among the last lines the job wrote. */
const TAIL_BYTES = 64 * 1024;

/** The last engine notice in the job's output file, or null (no file, no notice). */
export function engineNoticeIn(file: string): StepdNotice | null {
  let fd: number;
  try {
    fd = fs.openSync(file, "r");
  } catch {
    return null;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    fs.readSync(fd, buffer, 0, length, size - length);
    return parseStepdNotice(buffer.toString("utf8"));
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}
