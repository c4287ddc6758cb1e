import * as fs from "node:fs";
import * as path from "node:path";
import type { Clock } from "./clock.js";
import { readProcStat } from "./proc-stat.js";
import { isSameProcess, listLinuxPids, signalIdentified } from "./process-identity.js";
import { findByDispatchVariable, type ProcessRef } from "./sweep.js";
import { waitUntil } from "./wait-until.js";

// What an ended dispatch may still have running, found again later — before a follow-up of it starts
// (specs/dispatch.md, "Following up"). The supervisor's stop at the end takes the process group, the
// cgroup and every process carrying CATHERD_DISPATCH; what can survive it is a process that cleared its
// environment and left the group on a machine without a cgroup (still sitting in the turn's worktree),
// or anything of a turn whose supervisor died before its stop. Linux only: /proc names cwd and start.

/** A process left by an ended turn, and how it is known to be the turn's. */
export interface Leftover extends ProcessRef {
  why: "variable" | "cwd";
  /** Its command line, for the log line; "" when unreadable. */
  command: string;
}

/** Linux's user-visible clock tick (USER_HZ): /proc's start times count in it, on every architecture. */
const TICKS_PER_SECOND = 100;

/**
 * The processes provably of an ended turn: those carrying its CATHERD_DISPATCH, and — when it worked in a
 * private worktree — those whose cwd lies in that worktree and that started while the turn ran (`startedWithin`,
 * ms since boot: from its agent's start to the end of its stop), so that a user's shell opened in the
 * worktree afterwards is never one. A cwd in a folder others share (a checkout) proves nothing and is
 * never looked at. This process and pid ≤ 1 are never named.
 */
export function findLeftovers(turn: {
  dispatchId: string;
  worktree: string | null;
  startedWithin: { fromMs: number; toMs: number } | null;
}): Leftover[] {
  if (process.platform !== "linux") return [];
  const found = new Map<number, Leftover>();
  for (const ref of findByDispatchVariable(turn.dispatchId)) {
    found.set(ref.pid, { ...ref, why: "variable", command: commandOf(ref.pid) });
  }
  const { startedWithin } = turn;
  const worktree = turn.worktree === null ? null : realPathOr(turn.worktree);
  if (worktree === null || startedWithin === null) return [...found.values()];
  for (const pid of listLinuxPids()) {
    if (pid <= 1 || pid === process.pid || found.has(pid)) continue;
    const cwd = cwdOf(pid);
    if (cwd === null || !isInside(cwd, worktree)) continue;
    const stat = readProcStat(pid);
    if (stat === null) continue;
    const startedMs = (Number(stat.startTime) / TICKS_PER_SECOND) * 1000;
    if (startedMs < startedWithin.fromMs || startedMs > startedWithin.toMs) continue;
    found.set(pid, { pid, startTime: stat.startTime, why: "cwd", command: commandOf(pid) });
  }
  return [...found.values()];
}

/**
 * Stops each leftover by pid and start time: SIGTERM, up to `graceMs` for it to go, then SIGKILL. Returns
 * those that were signalled (a process gone or reused in between is not).
 */
export async function stopLeftovers(
  leftovers: readonly Leftover[],
  graceMs: number,
  clock: Clock,
): Promise<Leftover[]> {
  const signalled = leftovers.filter((l) => signalIdentified(l.pid, l.startTime, "SIGTERM"));
  await waitUntil(() => (signalled.some((l) => isSameProcess(l.pid, l.startTime)) ? undefined : true), {
    clock,
    deadline: clock.now() + graceMs,
    pollMs: 25,
  });
  for (const l of signalled) signalIdentified(l.pid, l.startTime, "SIGKILL");
  return signalled;
}

function realPathOr(folder: string): string | null {
  try {
    return fs.realpathSync(folder);
  } catch {
    return null; // gone: nothing can sit in it
  }
}

function cwdOf(pid: number): string | null {
  try {
    return fs.readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null; // gone, or not ours to read
  }
}

function commandOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim().slice(0, 200);
  } catch {
    return "";
  }
}

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}
