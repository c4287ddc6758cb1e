import { spawn } from "node:child_process";
import * as os from "node:os";
import * as path from "node:path";
import { readProcStat } from "../../src/infra/proc-stat.js";
import { listLinuxPids } from "../../src/infra/process-identity.js";
import { resolveExecutable } from "../../src/infra/which.js";
import { type CliResult, collectOutput } from "./cli.js";
import { CLI_MAIN, tempDir } from "./folders.js";
import { isAlive, pidInNamespace, pidNamespaceOf } from "./processes.js";
import { waitForLine } from "./wait.js";

// A submitting host where the pids of a dispatch placed elsewhere name processes of this host: a PID
// namespace of this kernel (`unshare --pid --fork --mount-proc`), with a /proc of its own, holding decoys
// — idle processes whose pids there are the numbers the dispatch's processes have on the other host
// (made so by /proc/sys/kernel/ns_last_pid in a namespace nothing else runs in), each carrying the
// dispatch's CATHERD_DISPATCH and its folder on its command line. catherd runs there through nsenter. A
// reader that took a pid from the folder for one of its own host, or swept its /proc for the dispatch,
// would find a decoy: each must still run, with its start time, when the readers are done.

const unshare = resolveExecutable("unshare", process.env.PATH ?? "");
const nsenter = resolveExecutable("nsenter", process.env.PATH ?? "");

/**
 * The namespace's first process: each decoy started at the pid asked for (the one after ns_last_pid), in
 * increasing order, or the namespace exits 3 naming the pid it got; "ready" in $1 once all run.
 */
const INIT = [
  "set -eu",
  'ready="$1"; node="$2"; id="$3"; dir="$4"; shift 4',
  'for pid in "$@"; do',
  "  echo $((pid - 1)) > /proc/sys/kernel/ns_last_pid",
  `  CATHERD_DISPATCH="$id" "$node" -e 'setInterval(() => {}, 1 << 30)' catherd-decoy "$dir" &`,
  '  [ "$!" -eq "$pid" ] || { echo "a decoy got pid $!, not $pid" >&2; exit 3; }',
  "done",
  'echo ready > "$ready"',
  "wait",
].join("\n");

export interface Decoys {
  /** Runs `catherd <args>` in the decoys' namespace, with a deadline. */
  run(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<CliResult>;
  /** The decoys' pids in their namespace that no longer run as the process started (gone, or replaced). */
  gone(): number[];
  /** Ends the namespace (its first process SIGKILLed: the kernel ends every decoy) and waits for it. */
  stop(): Promise<void>;
}

/** Why decoys cannot be made here, or null. */
export function decoysUnavailable(): string | null {
  if (process.getuid?.() !== 0) return "a PID namespace and its ns_last_pid need root";
  return unshare === null || nsenter === null ? "unshare and nsenter (util-linux) are needed" : null;
}

/** Starts the namespace with a decoy at each of `pids` (each > 1) for dispatch `dispatchId` in `dir`. */
export async function startDecoys(o: { pids: number[]; dispatchId: string; dir: string }): Promise<Decoys> {
  const pids = [...new Set(o.pids)].sort((a, b) => a - b);
  if (pids.some((pid) => pid <= 1)) throw new TypeError(`a decoy's pid must be above 1: ${pids.join(", ")}`);
  const ready = path.join(tempDir("catherd-decoys-"), "ready");
  const args = ["--pid", "--fork", "--mount-proc", "--", "sh", "-c", INIT, "sh"];
  const child = spawn(
    unshare as string,
    [...args, ready, process.execPath, o.dispatchId, o.dir, ...pids.map(String)],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    const init = initOf(child.pid);
    if (init !== null) process.kill(init, "SIGKILL");
    else if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  };
  try {
    await Promise.race([waitForLine(ready, 30_000), exited.then(() => Promise.reject(new Error(stderr)))]);
  } catch (error) {
    await stop();
    throw new Error(`the decoys did not start: ${(error as Error).message}`);
  }
  return decoysIn(initOf(child.pid) as number, pids, stop);
}

function decoysIn(init: number, pids: number[], stop: () => Promise<void>): Decoys {
  const inode = pidNamespaceOf(init) as string;
  const started = new Map(
    pids.map((pid) => {
      const outer = pidInNamespace(inode, pid) as number;
      return [pid, { outer, startTime: readProcStat(outer)?.startTime }];
    }),
  );
  return {
    run: (args, env, timeoutMs = 60_000) => {
      const argv = ["--target", String(init), "--pid", "--mount", "--", process.execPath, CLI_MAIN, ...args];
      const child = spawn(nsenter as string, argv, {
        env,
        cwd: os.tmpdir(),
        stdio: ["ignore", "pipe", "pipe"],
      });
      return collectOutput(child, `catherd ${args.join(" ")} among the decoys`, timeoutMs);
    },
    gone: () =>
      [...started]
        .filter(([, d]) => !isAlive(d.outer) || readProcStat(d.outer)?.startTime !== d.startTime)
        .map(([pid]) => pid),
    stop,
  };
}

/** The namespace's first process, as this machine numbers it: unshare's one child. */
function initOf(unsharePid: number | undefined): number | null {
  if (unsharePid === undefined) return null;
  return listLinuxPids().find((pid) => readProcStat(pid)?.ppid === unsharePid) ?? null;
}
