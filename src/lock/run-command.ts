import { spawn } from "node:child_process";
import type { Writable } from "node:stream";
import { CatherdError } from "../domain/errors.js";
import { signalGroup, startTimeOf } from "../infra/process-identity.js";
import { type LockSignals, signalExitCode } from "./signals.js";

// The command a lock runs once it holds its slot (specs/lock.md, "The command"): in the foreground, its
// stdin, stdout and stderr those of the lock, untouched; the leader of a process group of its own, so that
// a signal to the lock reaches all of it, as a shell's job gets Ctrl-C. Node starts a group only with a
// session (setsid): the command has no controlling terminal, which a test suite or a build never needs.
//
// It starts behind a gate: `sh` waits for a line on an extra pipe (fd 3), closes it and execs the command
// (the same pid). The lock names that pid in its claim first, then opens the gate, so the command never
// runs while the queue does not know of it: a lock SIGKILLed between the spawn and that write would free
// its slot under a running command. A lock that dies before it opens the gate closes the pipe: `sh` exits
// GATE_CLOSED_EXIT without running anything.

/** The file descriptor of the child on which the gate waits. */
const GATE_FD = 3;
/** The gate's exit code when its pipe closed without a word: the command was not run. */
export const GATE_CLOSED_EXIT = 125;
const GATE = `read -r _ <&${GATE_FD} || exit ${GATE_CLOSED_EXIT}; exec ${GATE_FD}<&-; exec "$0" "$@"`;

export interface Started {
  pid: number;
  startTime: string | null;
  /** Resolves to the command's exit status: its code, or 128 + n when a signal ended it. */
  ended: Promise<number>;
}

/** Where a command runs when not in the lock's own place (a dispatch's check): its folder, environment, output. */
export interface CommandPlace {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The file descriptor its stdout and stderr go to; its stdin is empty. */
  output: number;
}

/** A command to start behind its gate: who passes signals on to it, and what names it in the queue. */
export interface GatedStart {
  cmd: string;
  args: readonly string[];
  /** Passes the signals its holder hears on to the command's group; null: none are passed. */
  signals: Pick<LockSignals, "forwardTo"> | null;
  named: (pid: number, startTime: string | null) => Promise<void>;
  /** null: the lock's own folder, environment and stdio. */
  place: CommandPlace | null;
}

/**
 * Starts the command behind its gate, calls `named(pid, startTime)` (which puts it in the queue), then
 * lets it run. Rejects with E_SPAWN_FAILED when `sh` cannot be started; a `named` that throws closes the
 * gate (nothing runs) and rejects with its error.
 */
export function startCommand(
  cmd: string,
  args: readonly string[],
  signals: LockSignals,
  named: (pid: number, startTime: string | null) => Promise<void>,
): Promise<Started> {
  return startGated({ cmd, args, signals, named, place: null });
}

/** startCommand, for any holder of a slot and in any place. */
export async function startGated({ cmd, args, signals, named, place }: GatedStart): Promise<Started> {
  const child = spawn("/bin/sh", ["-c", GATE, cmd, ...args], {
    stdio:
      place === null
        ? ["inherit", "inherit", "inherit", "pipe"]
        : ["ignore", place.output, place.output, "pipe"],
    detached: true,
    ...(place === null ? {} : { cwd: place.cwd, env: place.env }),
  });
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
  signals?.forwardTo((signal) => {
    signalGroup(pid, signal);
  });
  const gate = child.stdio[GATE_FD] as Writable;
  gate.on("error", () => {}); // a gate whose reader died: the exit says the rest
  const startTime = startTimeOf(pid);
  try {
    await named(pid, startTime);
  } catch (error) {
    gate.destroy();
    await ended;
    throw error;
  }
  gate.end("go\n");
  return { pid, startTime, ended };
}
