import { spawn } from "node:child_process";
import { CatherdError } from "../domain/errors.js";
import { signalGroup, startTimeOf } from "../infra/process-identity.js";
import { type LockSignals, signalExitCode } from "./signals.js";

// The command a lock runs once it holds its slot (specs/lock.md, "The command"): in the foreground, its
// stdin, stdout and stderr those of the lock, untouched; the leader of a process group of its own, so that
// a signal to the lock reaches all of it, as a shell's job gets Ctrl-C. Node starts a group only with a
// session (setsid): the command has no controlling terminal, which a test suite or a build never needs.

export interface Started {
  pid: number;
  startTime: string | null;
  /** Resolves to the command's exit status: its code, or 128 + n when a signal ended it. */
  ended: Promise<number>;
}

/** Starts the command; rejects with E_SPAWN_FAILED when it cannot be started. */
export async function startCommand(
  cmd: string,
  args: readonly string[],
  signals: LockSignals,
): Promise<Started> {
  const child = spawn(cmd, args, { stdio: "inherit", detached: true });
  const ended = new Promise<number>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? (signal === null ? 1 : signalExitCode(signal))));
  });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (error) =>
      reject(
        new CatherdError("E_SPAWN_FAILED", `cannot start ${cmd}: ${error.message}`, {
          fix: "check that the command can be run: its path, its permissions",
          cause: error,
        }),
      ),
    );
  });
  const pid = child.pid as number;
  signals.forwardTo((signal) => {
    signalGroup(pid, signal);
  });
  return { pid, startTime: startTimeOf(pid), ended };
}
