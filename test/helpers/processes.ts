import * as fs from "node:fs";
import { isDeadState, readProcStat } from "../../src/infra/proc-stat.js";
import { findByDispatchVariable } from "../../src/infra/sweep.js";

/** Kills (by pid) whatever still carries CATHERD_DISPATCH=<id>, and says how many there were. */
export function reapDispatch(dispatchId: string): number {
  const left = findByDispatchVariable(dispatchId);
  for (const { pid } of left) {
    try {
      process.kill(pid, "SIGCONT");
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  return left.length;
}

/** Whether a pid names a live, non-zombie process. */
export function isAlive(pid: number): boolean {
  const stat = readProcStat(pid);
  return stat !== null && !isDeadState(stat);
}

/** Kills a pid we started, if still there. */
export function killPid(pid: number | undefined): void {
  if (pid === undefined || pid <= 1) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone
  }
}

/** Pids of the standby supervisors started for `home` (their argv names its <home>/.standby-*.out). */
export function standbysOf(home: string): number[] {
  const mark = `${home}/.standby-`;
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (argv.includes("--standby") && argv.some((a) => a.startsWith(mark)) && isAlive(Number(entry))) {
        pids.push(Number(entry));
      }
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
