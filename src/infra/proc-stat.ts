import * as fs from "node:fs";

// Linux's /proc/<pid>/stat, read in one place (process identity, liveness, CPU time; the tests and the
// bench use it too). ps-list stays for what it does well: the whole table with parents, on any platform.

/** The fields of /proc/<pid>/stat that catherd reads (proc(5); times in clock ticks). */
export interface ProcStat {
  /** R running, S sleeping, D disk sleep, T stopped, Z zombie, X dead, … */
  state: string;
  ppid: number;
  pgid: number;
  /** CPU time in user and kernel mode. */
  utime: number;
  stime: number;
  /** CPU time of waited-for children. */
  cutime: number;
  cstime: number;
  /** When the process started, in ticks since boot, as written (a string: compared, never computed). */
  startTime: string;
}

/**
 * Parses the text of /proc/<pid>/stat; null when it is not one. The command name (field 2) may hold
 * spaces and parentheses, so the fields are split after its last ")".
 */
export function parseProcStat(text: string): ProcStat | null {
  const close = text.lastIndexOf(")");
  if (close === -1) return null;
  // fields[0] is field 3 (state) of proc(5); field n is fields[n - 3].
  const fields = text
    .slice(close + 2)
    .trim()
    .split(" ");
  const startTime = fields[19];
  const state = fields[0];
  if (state === undefined || state === "" || startTime === undefined || !/^\d+$/.test(startTime)) return null;
  return {
    state,
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    utime: Number(fields[11]),
    stime: Number(fields[12]),
    cutime: Number(fields[13]),
    cstime: Number(fields[14]),
    startTime,
  };
}

/** /proc/<pid>/stat of a process, or null when it is gone (or this is not Linux). A zombie is returned as such. */
export function readProcStat(pid: number | "self"): ProcStat | null {
  if (pid !== "self" && (!Number.isInteger(pid) || pid <= 0)) return null;
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  return parseProcStat(text);
}

/** Whether a stat describes a process that has ended but not been reaped (Z) or is dying (X). */
export function isDeadState(stat: ProcStat): boolean {
  return stat.state === "Z" || stat.state === "X";
}
