import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { CLI_MAIN } from "./folders.js";
import { isAlive, killPid } from "./processes.js";
import { waitFor } from "./wait.js";

// `catherd lock` as real processes: started, watched on their output and notes, and ended by pid even
// when a test fails (`reapLocks` in an afterEach).

export interface LockProcess {
  child: ChildProcess;
  pid: number;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
}

const started = new Set<number>();
/** Pids a test learned of that the locks started (their commands, in sessions of their own). */
const commands = new Set<number>();

/** Starts `catherd lock <args>` with its output collected. */
export function startLock(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { stdin?: string } = {},
): LockProcess {
  const child = spawn(process.execPath, [CLI_MAIN, "lock", ...args], {
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const pid = child.pid as number;
  started.add(pid);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdin?.on("error", () => {});
  child.stdin?.end(options.stdin);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("close", (code, signal) => {
      started.delete(pid);
      resolve({ code, signal });
    });
  });
  return { child, pid, done, stdout: () => stdout, stderr: () => stderr };
}

/** Remembers a command's pid (written by the command itself), so that it is ended after the test. */
export function trackCommand(pid: number): number {
  commands.add(pid);
  return pid;
}

/** Kills every lock and command the test started; returns how many were still alive. */
export function reapLocks(): number {
  const left = [...started, ...commands].filter(isAlive);
  for (const pid of [...started, ...commands]) killPid(pid);
  started.clear();
  commands.clear();
  return left.length;
}

/** Waits until the lock has said it waits (its one line on stderr). */
export function waitUntilWaiting(lock: LockProcess, timeoutMs?: number): Promise<true> {
  return waitFor(
    `lock ${lock.pid} to say it waits`,
    () => (lock.stderr().includes("waiting for a") ? true : undefined),
    timeoutMs,
  );
}

/** Resolves with the lock's exit, or fails after a deadline instead of hanging the test. */
export async function exitOf(lock: LockProcess, timeoutMs = 30_000) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`lock ${lock.pid} did not end within ${timeoutMs} ms: ${lock.stderr()}`)),
      timeoutMs,
    );
  });
  return Promise.race([lock.done, late]).finally(() => clearTimeout(timer));
}

/** The lines of a notes file (each command appends to it), or none yet. */
export function notesOf(file: string): string[] {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

/**
 * A shell command that notes `start <tag>` in `notes`, waits until `go` exists (when given), sleeps `ms`,
 * notes `end <tag>` and exits `code`.
 */
export function notingCommand(
  notes: string,
  tag: string,
  options: { go?: string; ms?: number; code?: number } = {},
) {
  const wait = options.go === undefined ? "" : `while [ ! -e '${options.go}' ]; do sleep 0.02; done; `;
  const pause = options.ms === undefined ? "" : `sleep ${options.ms / 1000}; `;
  return [
    "/bin/sh",
    "-c",
    `echo "start ${tag}" >> '${notes}'; ${wait}${pause}echo "end ${tag}" >> '${notes}'; exit ${options.code ?? 0}`,
  ];
}

/** The most commands running at once, from a notes file's start/end (and `kill`) lines in order. */
export function mostAtOnce(lines: readonly string[]): number {
  let running = 0;
  let most = 0;
  for (const line of lines) {
    if (line.startsWith("start ")) running += 1;
    else if (line.startsWith("end ") || line.startsWith("kill ")) running -= 1;
    most = Math.max(most, running);
  }
  return most;
}

/** The folder of a class's queue in a home. */
export function classDirOf(home: string, cls = "heavy"): string {
  return path.join(home, "locks", cls);
}
