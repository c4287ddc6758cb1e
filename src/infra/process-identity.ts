import { execFileSync } from "node:child_process";
import * as fs from "node:fs";

// A process is identified by pid AND start time (design.md §1): a pid alone may have been reused.

/**
 * The start time of a live process, or null when it is gone or a zombie. On Linux: field 22 of
 * /proc/<pid>/stat (clock ticks since boot); elsewhere `ps -o lstart=`.
 */
export function startTimeOf(pid: number): string | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  if (process.platform === "linux") return linuxStartTime(pid);
  try {
    const out = execFileSync("ps", ["-o", "stat=,lstart=", "-p", String(pid)], {
      encoding: "utf8",
      timeout: 2000,
    });
    const m = /^\s*(\S+)\s+(.+?)\s*$/.exec(out);
    if (m === null || m[1]?.startsWith("Z")) return null;
    return m[2] ?? null;
  } catch {
    return null;
  }
}

function linuxStartTime(pid: number): string | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command name (field 2) may contain spaces and parentheses: split after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z" || fields[0] === "X") return null;
  return fields[19] ?? null; // field 22 overall; fields[0] is field 3
}

/** CPU time (user + system, in clock ticks) a live process has used; null when unknown (gone, not Linux). */
export function cpuTicksOf(pid: number): number | null {
  if (process.platform !== "linux" || !Number.isInteger(pid) || pid <= 0) return null;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]); // utime and stime, fields 14 and 15 overall
  } catch {
    return null;
  }
}

/** Whether the process with this pid is alive and is the one that started at `startTime`. */
export function isSameProcess(pid: number, startTime: string): boolean {
  return startTimeOf(pid) === startTime;
}

/**
 * Sends a signal only to the identified process: never pid ≤ 1, never a pid whose start time differs.
 * Returns whether the signal was delivered.
 */
export function signalIdentified(pid: number, startTime: string, signal: NodeJS.Signals): boolean {
  if (pid <= 1 || !isSameProcess(pid, startTime)) return false;
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Sends a signal to a whole process group; false when no member is left. Never group ≤ 1. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Whether any process of the group is alive and not a zombie. */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== "linux") return true;
  // kill(-pgid, 0) also succeeds while only zombies remain; look for a live member.
  return listLinuxPids().some((pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X";
    } catch {
      return false;
    }
  });
}

/** Pids of every process visible in /proc. */
export function listLinuxPids(): number[] {
  try {
    return fs
      .readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}
