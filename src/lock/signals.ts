import * as os from "node:os";

// What a `catherd lock` does with the signals a shell's user sends it (specs/lock.md, "Signals"): while it
// waits, the first one ends the wait (it leaves the queue and exits 128 + n, having run nothing); while
// its command runs, each one goes on to the command's process group, as a shell passes Ctrl-C to its
// foreground job.

export const LOCK_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const;

/** The exit status of a process ended by `signal`: 128 + its number, as shells report it. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (os.constants.signals[signal] ?? 0);
}

/** The process's handlers for LOCK_SIGNALS, installed for the whole of a lock. */
export class LockSignals {
  /** Aborted, with the signal as its reason, by the first signal before a command runs. */
  readonly interrupt = new AbortController();
  private forward: ((signal: NodeJS.Signals) => void) | null = null;

  constructor() {
    for (const signal of LOCK_SIGNALS) process.on(signal, this.received);
  }

  /** The signal that interrupted the wait, if one did. */
  get signal(): NodeJS.Signals | null {
    return this.interrupt.signal.aborted ? (this.interrupt.signal.reason as NodeJS.Signals) : null;
  }

  /** From now on every signal goes to `to` (the command's group) instead of ending the wait. */
  forwardTo(to: (signal: NodeJS.Signals) => void): void {
    this.forward = to;
  }

  dispose(): void {
    for (const signal of LOCK_SIGNALS) process.off(signal, this.received);
  }

  private readonly received = (signal: NodeJS.Signals) => {
    if (this.forward !== null) this.forward(signal);
    else if (!this.interrupt.signal.aborted) this.interrupt.abort(signal);
  };
}
