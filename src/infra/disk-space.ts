import * as fs from "node:fs";
import * as path from "node:path";
import { type DiskFull, isDiskFullCode } from "../domain/watch/disk.js";

// How full the file system holding a folder is, and where it is mounted (specs/supervisor.md, "A full
// disk"). statfs(2) answers in one system call: the supervisor can ask at every poll.

/**
 * The bytes a write to `dir` can still take: the blocks free to this user (root may also use the blocks
 * the file system keeps back for it). Null when statfs fails (the folder is gone, no statfs) or the file
 * system reports no size at all (some FUSE and network file systems): it says nothing of its room.
 */
export function freeBytes(dir: string): number | null {
  try {
    const stats = fs.statfsSync(dir);
    if (stats.blocks === 0) return null;
    const blocks = process.getuid?.() === 0 ? stats.bfree : stats.bavail;
    return blocks * stats.bsize;
  } catch {
    return null;
  }
}

/**
 * The file system holding `dir` as full when it has not one block free: the next write that needs a new
 * block (a line of the agent's output) fails with ENOSPC. Null when it has room, or statfs cannot tell.
 */
export function fullDisk(dir: string): DiskFull | null {
  const free = freeBytes(dir);
  return free === 0 ? { code: "ENOSPC", place: fileSystemOf(dir) } : null;
}

/** The disk-full code of an error a write threw (ENOSPC, EDQUOT, EIO), or null for any other. */
export function diskFullCodeOf(error: unknown): DiskFull["code"] | null {
  const code = (error as { code?: unknown } | null)?.code;
  return isDiskFullCode(code) ? code : null;
}

/** A write's refusal as a full disk at `dir`, or null when it was not one. */
export function diskFullOf(error: unknown, dir: string): DiskFull | null {
  const code = diskFullCodeOf(error);
  return code === null ? null : { code, place: fileSystemOf(dir) };
}

/**
 * The mount point and type of the file system holding `dir` ("/mnt/x (tmpfs)"), from
 * /proc/self/mountinfo: the longest mount point that contains it. The folder itself where that cannot be
 * read (not Linux).
 */
export function fileSystemOf(dir: string): string {
  let real: string;
  let text: string;
  try {
    real = fs.realpathSync(dir);
    text = fs.readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return dir;
  }
  let best: { mountPoint: string; fsType: string } | null = null;
  for (const line of text.split("\n")) {
    const separator = line.indexOf(" - ");
    if (separator < 0) continue;
    const mountPoint = unescapeOctal(line.slice(0, separator).split(" ")[4] ?? "");
    const fsType = line.slice(separator + 3).split(" ")[0] ?? "";
    if (mountPoint === "" || !contains(mountPoint, real)) continue;
    // Of equal mount points the last mounted hides the others.
    if (best === null || mountPoint.length >= best.mountPoint.length) best = { mountPoint, fsType };
  }
  return best === null ? dir : `${best.mountPoint} (${best.fsType})`;
}

function contains(mountPoint: string, file: string): boolean {
  if (mountPoint === "/") return true;
  return (
    file === mountPoint || file.startsWith(mountPoint.endsWith(path.sep) ? mountPoint : mountPoint + path.sep)
  );
}

function unescapeOctal(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}
