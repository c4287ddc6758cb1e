import type { Clock } from "../src/infra/clock.js";
import { isSameProcess } from "../src/infra/process-identity.js";
import type { ChildExit, RunningChild } from "./child.js";

/**
 * How often an adopting supervisor looks whether the agent it took over is still alive. It did not spawn
 * it, so no exit event comes: a read of /proc/<pid>/stat each time, and the agent's end is seen this late
 * at most.
 */
export const ADOPTED_LIVENESS_MS = 1000;

/**
 * The agent of an adopted dispatch, as a RunningChild: alive while its pid and start time read back, ended
 * when they do not. Its exit code and signal were its parent's to collect, so they are null ("unknown").
 * `dispose` stops the watching (the supervisor calls it at its end: no timer keeps it alive).
 */
export function adoptedChild(
  agent: { pid: number; startTime: string; pgid?: number },
  clock: Clock,
  /** How it ended, where something else than its parent knows (a sandbox's status file); null: unknown. */
  exitOf: () => ChildExit | null = () => null,
): RunningChild & { dispose(): void } {
  const { pid, startTime, pgid = pid } = agent;
  const ended = new AbortController();
  const disposed = new AbortController();
  let resolveExited: (exit: ChildExit) => void = () => {};
  const child: RunningChild & { dispose(): void } = {
    pid,
    pgid,
    exit: null,
    exitSignal: ended.signal,
    letRun: () => {},
    exited: new Promise((resolve) => {
      resolveExited = resolve;
    }),
    dispose: () => disposed.abort(),
  };
  void (async () => {
    while (!disposed.signal.aborted) {
      if (!isSameProcess(pid, startTime)) {
        const exit: ChildExit = exitOf() ?? { code: null, signal: null };
        child.exit = exit;
        ended.abort();
        resolveExited(exit);
        return;
      }
      await clock.sleep(ADOPTED_LIVENESS_MS, disposed.signal);
    }
  })();
  return child;
}
