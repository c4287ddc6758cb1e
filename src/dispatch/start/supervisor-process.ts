import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";

/** A supervisor process as the dispatcher that started it sees it. */
export interface SupervisorProcess {
  child: ChildProcess;
  /** How it ended (`exit code N` or a signal), null while it runs. */
  ended(): string | null;
  /** Null once it is running, or the error that kept it from starting. */
  spawned: Promise<Error | null>;
}

/**
 * Starts `node <program> <args…>` detached in its own session (so a signal to the dispatcher's process
 * group never reaches it, and it outlives the dispatcher), stdout and stderr into the file open on `outFd`
 * (closed here), stdin as given. Throws only when node refuses to spawn at all.
 */
export function startSupervisorProcess(
  program: string,
  args: readonly string[],
  { stdin, outFd, cwd }: { stdin: "pipe" | "ignore"; outFd: number; cwd: string },
): SupervisorProcess {
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [program, ...args], {
      detached: true,
      stdio: [stdin, outFd, outFd],
      cwd,
    });
  } finally {
    fs.closeSync(outFd);
  }
  let how: string | null = null;
  child.once("exit", (code, signal) => {
    how = signal ?? `exit code ${code}`;
  });
  const spawned = new Promise<Error | null>((resolve) => {
    child.once("spawn", () => resolve(null));
    child.once("error", resolve);
  });
  return { child, ended: () => how, spawned };
}
