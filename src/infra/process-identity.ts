import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { isDeadState, readProcStat } from "./proc-stat.js";

// A process is identified by pid AND start time (specs/supervisor.md): a pid alone may have been reused.

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
  const stat = readProcStat(pid);
  return stat === null || isDeadState(stat) ? null : stat.startTime;
}

/** CPU time (user + system, in clock ticks) a live process has used; null when unknown (gone, not Linux). */
export function cpuTicksOf(pid: number): number | null {
  if (process.platform !== "linux") return null;
  const stat = readProcStat(pid);
  return stat === null ? null : stat.utime + stat.stime;
}

/**
 * Whether the process with this pid is alive and is the one that started at `startTime`. A start time
 * that could not be read when the process was named (null: "alive, cannot verify") cannot be compared:
 * such a process counts as alive while its pid is (a live dispatch is never judged lost for it), and is
 * never signalled (signalIdentified).
 */
export function isSameProcess(pid: number, startTime: string | null): boolean {
  if (startTime === null) return pidAlive(pid);
  return startTimeOf(pid) === startTime;
}

/** Whether a pid names a live process (not a zombie, where that can be told). */
function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (process.platform === "linux") {
    const stat = readProcStat(pid);
    return stat !== null && !isDeadState(stat);
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Sends a signal only to the identified process: never pid ≤ 1, never a pid whose start time differs or
 * is unknown. Returns whether the signal was delivered.
 */
export function signalIdentified(pid: number, startTime: string | null, signal: NodeJS.Signals): boolean {
  if (pid <= 1 || startTime === null || !isSameProcess(pid, startTime)) return false;
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
    const stat = readProcStat(pid);
    return stat !== null && stat.pgid === pgid && !isDeadState(stat);
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
