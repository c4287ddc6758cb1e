// @ts-check
// What /proc says about a process: state, group, CPU, memory, and the CATHERD_DISPATCH it carries.
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { CLK_TCK, DIST } from "./config.mjs";

/** @typedef {import("../../src/infra/proc-stat.js").ProcStat} ProcStat */

/** A process, by pid and start time (a pid alone may have been reused). @typedef {{ pid: number, startTime: string }} ProcessRef */

/**
 * /proc/<pid>/stat, parsed by catherd's own parser (src/infra/proc-stat.ts, from the build), or null when
 * the process is gone.
 */
export const { readProcStat: procStat } = /** @type {typeof import("../../src/infra/proc-stat.js")} */ (
  await import(pathToFileURL(path.join(DIST, "src/infra/proc-stat.js")).href)
);

/**
 * Resident and peak resident memory (kB), or null when the process is gone.
 * @param {number} pid
 * @returns {{ rssKb: number, hwmKb: number } | null}
 */
export function procMem(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    /** @param {string} key */
    const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(text)?.[1] ?? Number.NaN);
    return { rssKb: kb("VmRSS"), hwmKb: kb("VmHWM") };
  } catch {
    return null;
  }
}

/**
 * Proportional set size (MiB): file pages shared with other processes counted by share.
 * @param {number} pid
 */
export function procPssMiB(pid) {
  try {
    const pss = /^Pss:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1];
    return Number(pss ?? Number.NaN) / 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * Private memory (MiB) of a process: USS, the pages no other process maps (`Private_Clean` +
 * `Private_Dirty` of smaps_rollup: what one more such process costs the machine), and PSS, shared pages
 * counted by share. NaN for both when the process is gone.
 * @param {number} pid
 * @returns {{ ussMiB: number, pssMiB: number }}
 */
export function procPrivate(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    /** @param {string} key */
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? Number.NaN);
    return { ussMiB: (kb("Private_Clean") + kb("Private_Dirty")) / 1024, pssMiB: kb("Pss") / 1024 };
  } catch {
    return { ussMiB: Number.NaN, pssMiB: Number.NaN };
  }
}

/**
 * CPU seconds (user + system) a process has used.
 * @param {number} pid
 */
export function cpuSecs(pid) {
  const st = procStat(pid);
  return st === null ? Number.NaN : (st.utime + st.stime) / CLK_TCK;
}

/**
 * CPU seconds on the CPU by the scheduler's count (ns precision), summed over the process's threads.
 * @param {number} pid
 */
export function schedSecs(pid) {
  try {
    let ns = 0;
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    }
    return ns / 1e9;
  } catch {
    return Number.NaN;
  }
}

/** CPU ms of this process's children that have been waited for (cutime + cstime). */
export function childCpuMs() {
  const st = procStat(process.pid);
  return st === null ? Number.NaN : ((st.cutime + st.cstime) / CLK_TCK) * 1000;
}

/**
 * Whether the process is alive and is still the one we saw (same start time; a zombie is dead).
 * @param {ProcessRef} ref
 */
export function isAlive(ref) {
  const st = procStat(ref.pid);
  return st !== null && st.startTime === ref.startTime && st.state !== "Z" && st.state !== "X";
}

/** Every pid in /proc. */
export function pids() {
  return fs
    .readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
}

/**
 * pid → CATHERD_DISPATCH of every process that carries one (other than this one).
 * @returns {Map<number, string>}
 */
export function dispatchVariables() {
  const found = new Map();
  for (const pid of pids()) {
    if (pid === process.pid) continue;
    let env;
    try {
      env = fs.readFileSync(`/proc/${pid}/environ`, "latin1");
    } catch {
      continue;
    }
    for (const entry of env.split("\0")) {
      if (entry.startsWith("CATHERD_DISPATCH=")) found.set(pid, entry.slice("CATHERD_DISPATCH=".length));
    }
  }
  return found;
}
