import * as fs from "node:fs";
import * as path from "node:path";
import { detectCgroups } from "../../src/infra/cgroup/detect.js";
import { isDeadState, readProcStat } from "../../src/infra/proc-stat.js";
import { listLinuxPids } from "../../src/infra/process-identity.js";
import { findByDispatchVariable } from "../../src/infra/sweep.js";
import { waitFor } from "./wait.js";

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

const cgroupLayout = detectCgroups();

/**
 * The cgroup folders of a dispatch still under catherd's cgroup, in every hierarchy (its name is its id
 * and a hash of its folder: infra/cgroup/dispatch-cgroup.ts). None where the machine gives no cgroups.
 */
export function cgroupsOf(dispatchId: string): string[] {
  if (cgroupLayout === null) return [];
  const prefix = `${dispatchId
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .replace(/^\.+/, "_")
    .slice(0, 64)}-`;
  return cgroupLayout.hierarchies.flatMap(({ parent }) => {
    try {
      return fs
        .readdirSync(parent)
        .filter((name) => name.startsWith(prefix) && /^[0-9a-f]{10}$/.test(name.slice(prefix.length)))
        .map((name) => path.join(parent, name));
    } catch {
      return [];
    }
  });
}

/** Removes (once empty) the cgroups a dispatch left behind, and says how many there were. */
export function reapCgroups(dispatchId: string): number {
  const left = cgroupsOf(dispatchId);
  for (const dir of left) {
    try {
      fs.rmdirSync(dir);
    } catch {
      // still busy: the process reaper got there first or a member is stuck; counted either way
    }
  }
  return left.length;
}

/**
 * Waits until the supervisor of `dir` has paused at `point` (CATHERD_TEST_ONLY_PAUSE_AT) and returns its pid.
 * The hook writes its marker just before it stops itself, so the marker alone does not say it is stopped:
 * this waits for the stopped state too (a SIGCONT sent before that would be lost, a state read too early).
 */
export async function waitForPause(dir: string, point: string, timeoutMs?: number): Promise<number> {
  const marker = path.join(dir, `test-paused-${point}`);
  return waitFor(
    `the supervisor to pause at ${point}`,
    () => {
      const text = fs.existsSync(marker) ? fs.readFileSync(marker, "utf8") : "";
      const pid = text.endsWith("\n") ? Number(text.trim()) : 0;
      return pid > 0 && readProcStat(pid)?.state === "T" ? pid : undefined;
    },
    timeoutMs,
  );
}

/** The inode of a process's PID namespace, as /proc/<pid>/ns/pid shows it, or null when it is gone. */
export function pidNamespaceOf(pid: number): string | null {
  try {
    return /\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/ns/pid`))?.[1] ?? null;
  } catch {
    return null;
  }
}

/**
 * The pid, as this machine numbers it, of the process in PID namespace `inode` that numbers itself
 * `innerPid` there: the last field of its NSpid line (proc(5): its pid in each namespace, outermost first).
 */
export function pidInNamespace(inode: string, innerPid: number): number | null {
  for (const pid of listLinuxPids()) {
    if (pidNamespaceOf(pid) !== inode) continue;
    let status = "";
    try {
      status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    } catch {
      continue;
    }
    const nspid = /^NSpid:\s+(.+)$/m.exec(status)?.[1]?.trim().split(/\s+/);
    if (nspid !== undefined && Number(nspid[nspid.length - 1]) === innerPid) return pid;
  }
  return null;
}
