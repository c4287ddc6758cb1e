import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Readable, Writable } from "node:stream";
import { FILE_MODE } from "../src/infra/atomic.js";
import { JOIN_STATUS_FD, joinCommand, joinStatus } from "../src/infra/cgroup/join.js";
import { tailLines } from "../src/infra/tail.js";
import { resolveExecutable } from "../src/infra/which.js";

/** How the agent ended, as node reports it. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningChild {
  pid: number;
  /**
   * The group a stop signals: the agent's own. It is `pid`'s, but for a sandboxed agent, whose group is its
   * own inside the sandbox while `pid` is bubblewrap's monitor (supervisor/sandbox/sandbox.ts).
   */
  pgid: number;
  /** Resolves once the agent (the group leader) has exited and been reaped. */
  exited: Promise<ChildExit>;
  /** The exit, once known. */
  exit: ChildExit | null;
  /** Aborted when the agent exits: lets a poll's sleep end early. */
  exitSignal: AbortSignal;
  /**
   * Lets a sandboxed agent run: it waits at its sandbox's gate until the supervisor has named it in proc.json
   * (SANDBOX_GO_FD). A no-op for an agent that runs from its spawn (an unsandboxed or an adopted one).
   */
  letRun(): void;
}

export interface SpawnRequest {
  cmd: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  stdinPath: string | null;
  /** stdinPath is the dispatch's channel (channel.ts): opened for reading and writing, never to EOF. */
  stdinChannel?: boolean;
  eventsPath: string;
  stderrPath: string;
  /** The cgroup.procs files of the dispatch's cgroup: the agent is started inside it. */
  cgroupProcs?: readonly string[] | undefined;
  /** Called once the command is spawned, before its sandbox (if any) is said up: a test's pause point. */
  onSpawned?: () => void;
  /** The sandbox the agent runs in (supervisor/sandbox/): its command line around the agent's, its status file. */
  sandbox?: {
    wrap(cmd: string, args: readonly string[]): { cmd: string; args: string[] };
    statusPath: string;
  } | null;
}

/**
 * The file descriptor the sandbox's first program writes one byte on once the sandbox is up, before it waits
 * at its gate (SANDBOX_GO_FD, supervisor/sandbox/bridge.ts); its end without a byte is a sandbox that could not
 * be set up. (fd 4 is unused: bubblewrap's --info-fd is not asked for, see sandboxedPidOf.)
 */
export const SANDBOX_UP_FD = 5;
/**
 * The file descriptor bubblewrap writes the agent's exit status on (--json-status-fd): the dispatch's
 * fence-status.json, so that an adopter, which cannot wait() for the agent, knows how it ended.
 */
export const SANDBOX_STATUS_FD = 6;
/**
 * The sandbox's gate: its first program reads `go` here before it runs the agent (supervisor/sandbox/
 * bridge.ts); the end of the stream without it (the supervisor died) ends the sandbox, nothing run.
 */
export const SANDBOX_GO_FD = 7;

/** The sandbox could not be set up around the agent (bubblewrap said why on stderr); the agent never ran. */
export class SandboxFailed extends Error {}

/** The agent could not be started inside its cgroup; nothing ran (src/infra/cgroup/join.ts). */
export class CgroupJoinFailed extends Error {
  constructor() {
    super("the agent could not join its cgroup");
  }
}

/**
 * Starts the agent as the leader of a new process group: stdin from a file (or /dev/null, never an
 * inherited pipe: Codex waits for EOF), stdout and stderr straight into files that outlive the supervisor.
 * With `cgroupProcs`, through the join wrapper, so that it is inside its cgroup before it runs a single
 * instruction of its own; rejects with CgroupJoinFailed (after the wrapper ended, nothing run) when it
 * could not join. Rejects when the command cannot be started.
 */
export async function spawnAgent(request: SpawnRequest): Promise<RunningChild> {
  const fds: number[] = [];
  const open = (file: string, flags: string) => {
    const fd = fs.openSync(file, flags, FILE_MODE);
    fds.push(fd);
    return fd;
  };
  try {
    const stdin = open(request.stdinPath ?? "/dev/null", request.stdinChannel === true ? "r+" : "r");
    const stdout = open(request.eventsPath, "a");
    const stderr = open(request.stderrPath, "a");
    fs.fchmodSync(stdout, FILE_MODE);
    fs.fchmodSync(stderr, FILE_MODE);
    const joining = request.cgroupProcs !== undefined && request.cgroupProcs.length > 0;
    const sandboxed = request.sandbox !== undefined && request.sandbox !== null;
    const status = sandboxed
      ? open((request.sandbox as NonNullable<SpawnRequest["sandbox"]>).statusPath, "w")
      : null;
    const inner = sandboxed
      ? (request.sandbox as NonNullable<SpawnRequest["sandbox"]>).wrap(resolvedCommand(request), request.args)
      : { cmd: request.cmd, args: [...request.args] };
    const argv = joining ? joinArgv({ ...request, ...inner }) : inner;
    const child = spawn(argv.cmd, argv.args, {
      cwd: request.cwd,
      env: request.env,
      stdio: [
        stdin,
        stdout,
        stderr,
        joining ? "pipe" : "ignore",
        ...(status === null ? [] : (["ignore", "pipe", status, "pipe"] as const)),
      ],
      detached: true, // setsid: its own session and process group, so the group can be stopped whole
      argv0: path.basename(joining ? argv.cmd : request.cmd),
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    const running = track(child, sandboxed);
    request.onSpawned?.();
    if (joining && !(await joinStatus(child.stdio[JOIN_STATUS_FD] as Readable))) {
      await running.exited;
      throw new CgroupJoinFailed();
    }
    if (sandboxed) {
      const stdio = child.stdio as unknown as Readable[];
      const gate = stdio[SANDBOX_GO_FD] as unknown as Writable;
      const up = await sandboxUp(stdio[SANDBOX_UP_FD] as Readable, running.exited);
      const inside = up
        ? sandboxedPidOf((request.sandbox as NonNullable<SpawnRequest["sandbox"]>).statusPath)
        : null;
      if (inside === null) {
        gate.destroy(); // a sandbox up without a known pid is ended at its gate, nothing run
        await running.exited;
        throw new SandboxFailed(
          `the sandbox could not be set up: ${tailLines(request.stderrPath, 1)[0]?.trim() || "bwrap ended"}`,
        );
      }
      running.pgid = inside;
      running.letRun = gateOpener(gate);
    }
    return running;
  } finally {
    for (const fd of fds) fs.closeSync(fd);
  }
}

/** Says `go` on the sandbox's gate once, then closes it: the agent runs from here (bridge.ts). */
function gateOpener(gate: Writable): () => void {
  let opened = false;
  return () => {
    if (opened) return;
    opened = true;
    gate.on("error", () => {});
    gate.end("go\n");
  };
}

/**
 * What a pipe from bubblewrap said before it ended — or before bubblewrap exited, whichever is first: a
 * process inside may hold the pipe past bubblewrap's own end, and must not keep the supervisor waiting.
 * Anything written before bubblewrap exited is readable when its exit is seen, and is read in that same
 * turn of the event loop or an earlier one: one turn after the exit, the pipe has said all it will.
 * `enough` ends the read early once it has what it needs.
 */
function readUntilEnd(
  pipe: Readable,
  exited: Promise<unknown>,
  enough: (read: Buffer) => boolean = () => false,
): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const settle = () => {
      if (done) return;
      done = true;
      pipe.destroy();
      resolve(Buffer.concat(chunks));
    };
    pipe.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (enough(Buffer.concat(chunks))) settle();
    });
    pipe.once("end", settle);
    pipe.once("error", settle);
    void exited.then(() => setImmediate(settle));
  });
}

/**
 * The pid of the sandbox's init (pid 1 inside, the leader of its session and group: --new-session), from the
 * first document bubblewrap writes into its status file, before it lets the sandbox be set up: known once
 * the sandbox is up. A file, not a pipe: bubblewrap's monitor writes it before it releases the sandbox, and
 * a write into a pipe whose reader died (a supervisor SIGKILLed right after the spawn) would kill the
 * monitor there and leave the sandbox waiting for it forever.
 */
function sandboxedPidOf(statusPath: string): number | null {
  let text: string;
  try {
    text = fs.readFileSync(statusPath, "utf8");
  } catch {
    return null;
  }
  const pid = Number(/"child-pid"\s*:\s*(\d+)/.exec(text)?.[1]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** Whether the sandbox's first program said the sandbox is up (a byte) before the pipe ended or bubblewrap exited. */
async function sandboxUp(up: Readable, exited: Promise<unknown>): Promise<boolean> {
  return (await readUntilEnd(up, exited, (read) => read.length > 0)).length > 0;
}

/** Where a command is looked up when the agent's environment has no PATH (execvp's own default). */
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * The wrapper's argv. `sh` would report a missing command only by its exit code, after the spawn has
 * succeeded: the command is resolved here first, so that it fails to start as it would without a cgroup.
 */
function joinArgv(request: SpawnRequest): { cmd: string; args: string[] } {
  return joinCommand(request.cgroupProcs ?? [], resolvedCommand(request), request.args);
}

/** The request's command as an absolute path, or the spawn's own ENOENT when there is none to run. */
function resolvedCommand(request: Pick<SpawnRequest, "cmd" | "cwd" | "env">): string {
  // A relative command with a slash is relative to the agent's cwd, as spawn takes it.
  const named = request.cmd.includes("/") ? path.resolve(request.cwd, request.cmd) : request.cmd;
  const cmd = resolveExecutable(named, request.env.PATH ?? DEFAULT_PATH);
  if (cmd === null) {
    throw Object.assign(new Error(`spawn ${request.cmd} ENOENT`), { code: "ENOENT", path: request.cmd });
  }
  return cmd;
}

/**
 * How a sandboxed agent ended, from bubblewrap's status file (its last `exit-code` document), for a
 * supervisor that did not spawn it; null while bubblewrap has not written one.
 */
export function sandboxedExitOf(statusPath: string): ChildExit | null {
  let text: string;
  try {
    text = fs.readFileSync(statusPath, "utf8");
  } catch {
    return null;
  }
  const codes = [...text.matchAll(/"exit-code"\s*:\s*(\d+)/g)];
  const last = codes[codes.length - 1];
  return last === undefined ? null : agentExit(Number(last[1]), null, true);
}

/**
 * bubblewrap exits with the agent's status, a death by signal N as 128 + N: read back as the signal, so
 * that a sandboxed agent's exit says what an unsandboxed one's would.
 */
function agentExit(code: number | null, signal: NodeJS.Signals | null, sandboxed: boolean): ChildExit {
  if (!sandboxed || code === null || code <= 128) return { code, signal };
  const name = Object.entries(os.constants.signals).find(([, n]) => n === code - 128)?.[0];
  return name === undefined ? { code, signal } : { code: null, signal: name as NodeJS.Signals };
}

function track(child: ChildProcess, sandboxed: boolean): RunningChild {
  const exitController = new AbortController();
  const running: RunningChild = {
    pid: child.pid as number,
    pgid: child.pid as number,
    exit: null,
    exitSignal: exitController.signal,
    letRun: () => {},
    exited: new Promise<ChildExit>((resolve) => {
      child.once("exit", (code, signal) => {
        running.exit = agentExit(code, signal, sandboxed);
        exitController.abort();
        resolve(running.exit);
      });
    }),
  };
  return running;
}
