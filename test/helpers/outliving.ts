import * as fs from "node:fs";
import { isDeadState, readProcStat } from "../../src/infra/proc-stat.js";
import { listLinuxPids } from "../../src/infra/process-identity.js";

// What outlives a test: the processes that still carry one of its temp folders — a catherd home, a
// hand-made dispatch folder, a repository — after the test has returned. catherd starts processes that
// legitimately outlive a record by a moment (specs/testing.md, "What outlives a record": the promoter,
// the notifier, a supervisor releasing its lock and folding the ledger, a standby): a test's folders are
// removed only once every one of them has exited, and one still there at the deadline fails the test,
// named with what it was doing.

/** A live process that carries one of the folders, and how. */
export interface Carrier {
  pid: number;
  /** Its command line, as /proc shows it. */
  argv: string[];
  /** Its state letter (R, S, D, T …), from /proc/<pid>/stat. */
  state: string;
  /** How it carries the folder: a variable, an argument or its working folder. */
  by: string;
}

/**
 * Every live process but this one and its ancestors whose environment holds a value under one of
 * `dirs`, whose arguments name a path under one, or whose working folder is under one.
 */
export function processesCarrying(dirs: readonly string[]): Carrier[] {
  if (dirs.length === 0 || process.platform !== "linux") return [];
  const mine = ancestry();
  const found: Carrier[] = [];
  for (const pid of listLinuxPids()) {
    if (pid <= 1 || mine.has(pid)) continue;
    const stat = readProcStat(pid);
    if (stat === null || isDeadState(stat)) continue;
    const by = howCarried(pid, dirs);
    if (by === null) continue;
    found.push({ pid, argv: readList(`/proc/${pid}/cmdline`), state: stat.state, by });
  }
  return found;
}

/** This process and its parents up to init: never counted (the test runner itself). */
function ancestry(): Set<number> {
  const pids = new Set<number>();
  let pid = process.pid;
  while (pid > 1 && !pids.has(pid)) {
    pids.add(pid);
    pid = readProcStat(pid)?.ppid ?? 0;
  }
  return pids;
}

function howCarried(pid: number, dirs: readonly string[]): string | null {
  const under = (value: string) => dirs.find((dir) => value === dir || value.startsWith(`${dir}/`));
  for (const variable of readList(`/proc/${pid}/environ`)) {
    const eq = variable.indexOf("=");
    const dir = eq === -1 ? undefined : under(variable.slice(eq + 1));
    if (dir !== undefined) return `its variable ${variable.slice(0, eq)} (${dir})`;
  }
  for (const arg of readList(`/proc/${pid}/cmdline`)) {
    const dir = dirs.find((d) => arg.includes(d));
    if (dir !== undefined) return `its argument ${arg}`;
  }
  try {
    const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
    if (under(cwd) !== undefined) return `its working folder ${cwd}`;
  } catch {
    // gone, or not ours to read
  }
  return null;
}

/** A NUL-separated /proc list (cmdline, environ); empty when the process is gone or not readable. */
function readList(file: string): string[] {
  try {
    return fs.readFileSync(file, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/** One line per carrier: its pid, what it runs, its state and how it carries the folder. */
export function describeCarriers(carriers: readonly Carrier[]): string {
  return carriers
    .map((c) => `pid ${c.pid} (${c.argv.join(" ").slice(0, 300)}), state ${c.state}, by ${c.by}`)
    .join("\n");
}
