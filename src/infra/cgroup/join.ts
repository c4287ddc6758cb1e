import type { Readable } from "node:stream";

// Starting a command inside a cgroup without a race: a spawned process could fork before its parent moves
// it, so the command is started through `sh`, which writes its own pid into each cgroup.procs file and then
// execs the command (same pid, already inside: every process it ever starts is born inside). Node offers
// no hook between fork and exec, and moving the parent in around the spawn would move it too.
//
// The wrapper tells its parent on an extra pipe (fd 3) that it joined, and closes that fd before the exec
// so the command never inherits it. When a write fails it exits 125 without running the command; the
// parent then knows that nothing ran and can start it again uncontained.

/** The file descriptor of the child on which the wrapper says "joined". */
export const JOIN_STATUS_FD = 3;

/** The wrapper's exit code when it could not join: the command was not run. */
export const JOIN_FAILED_EXIT = 125;

const SCRIPT = [
  'n="$1"; shift',
  'while [ "$n" -gt 0 ]; do',
  `  { echo "$$" > "$1"; } 2>/dev/null || exit ${JOIN_FAILED_EXIT}`,
  "  shift; n=$((n - 1))",
  "done",
  `echo joined >&${JOIN_STATUS_FD}`,
  `exec ${JOIN_STATUS_FD}>&-`,
  'exec "$@"',
].join("\n");

/**
 * The argv that runs `cmd args` inside the cgroup whose cgroup.procs files are given. Spawn it with a
 * "pipe" at stdio index JOIN_STATUS_FD and hand that pipe to `joinStatus`. `cmd` is looked up on the
 * child's PATH by `sh` as `spawn` would; resolve it first to report a missing command as a spawn failure.
 */
export function joinCommand(
  procsFiles: readonly string[],
  cmd: string,
  args: readonly string[],
): { cmd: string; args: string[] } {
  return {
    cmd: "/bin/sh",
    args: ["-c", SCRIPT, "catherd-join", String(procsFiles.length), ...procsFiles, cmd, ...args],
  };
}

/** Resolves true once the wrapper said it joined, false when its pipe closed without a word. */
export function joinStatus(pipe: Readable | null | undefined): Promise<boolean> {
  if (pipe === null || pipe === undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    let text = "";
    const finish = (joined: boolean) => {
      pipe.removeAllListeners();
      pipe.on("error", () => {});
      pipe.destroy();
      resolve(joined);
    };
    pipe.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      if (text.includes("joined\n")) finish(true);
    });
    pipe.on("end", () => finish(false));
    pipe.on("close", () => finish(false));
    pipe.on("error", () => finish(false));
  });
}
