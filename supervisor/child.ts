import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { FILE_MODE } from "../src/infra/atomic.js";

/** How the agent ended, as node reports it. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningChild {
  pid: number;
  /** Resolves once the agent (the group leader) has exited and been reaped. */
  exited: Promise<ChildExit>;
  /** The exit, once known. */
  exit: ChildExit | null;
  /** Aborted when the agent exits: lets a poll's sleep end early. */
  exitSignal: AbortSignal;
}

export interface SpawnRequest {
  cmd: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  stdinPath: string | null;
  eventsPath: string;
  stderrPath: string;
}

/**
 * Starts the agent as the leader of a new process group: stdin from a file (or /dev/null, never an
 * inherited pipe: Codex waits for EOF), stdout and stderr straight into files that outlive the supervisor.
 * Rejects when the command cannot be started.
 */
export async function spawnAgent(request: SpawnRequest): Promise<RunningChild> {
  const fds: number[] = [];
  const open = (file: string, flags: string) => {
    const fd = fs.openSync(file, flags, FILE_MODE);
    fds.push(fd);
    return fd;
  };
  try {
    const stdin = open(request.stdinPath ?? "/dev/null", "r");
    const stdout = open(request.eventsPath, "a");
    const stderr = open(request.stderrPath, "a");
    fs.fchmodSync(stdout, FILE_MODE);
    fs.fchmodSync(stderr, FILE_MODE);
    const child = spawn(request.cmd, [...request.args], {
      cwd: request.cwd,
      env: request.env,
      stdio: [stdin, stdout, stderr],
      detached: true, // setsid: its own session and process group, so the group can be stopped whole
      argv0: path.basename(request.cmd),
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    return track(child);
  } finally {
    for (const fd of fds) fs.closeSync(fd);
  }
}

function track(child: ChildProcess): RunningChild {
  const exitController = new AbortController();
  const running: RunningChild = {
    pid: child.pid as number,
    exit: null,
    exitSignal: exitController.signal,
    exited: new Promise<ChildExit>((resolve) => {
      child.once("exit", (code, signal) => {
        running.exit = { code, signal };
        exitController.abort();
        resolve(running.exit);
      });
    }),
  };
  return running;
}
