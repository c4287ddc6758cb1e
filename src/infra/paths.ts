import * as os from "node:os";
import * as path from "node:path";
import { requireId } from "../domain/ids.js";

// Where things live (design.md §2). Every path below a run is built from validated ids, so no name or id
// can reach outside its run.

/** `$CATHERD_HOME`, else `$XDG_DATA_HOME/catherd`, else `~/.local/share/catherd`. */
export function catherdHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CATHERD_HOME !== undefined && env.CATHERD_HOME !== "") return path.resolve(env.CATHERD_HOME);
  if (env.XDG_DATA_HOME !== undefined && env.XDG_DATA_HOME !== "")
    return path.join(env.XDG_DATA_HOME, "catherd");
  return path.join(os.homedir(), ".local", "share", "catherd");
}

/** The run: `--run`, else `$CATHERD_RUN`, else `default`. */
export function runName(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return requireId(
    "--run",
    flag ?? (env.CATHERD_RUN !== undefined && env.CATHERD_RUN !== "" ? env.CATHERD_RUN : "default"),
  );
}

export interface RunPaths {
  run: string;
  dir: string;
  runFile: string;
  admissionLock: string;
  dispatches: string;
  /** Markers of admitted, not yet recorded dispatches: admission reads only these. */
  live: string;
  /** The git worktrees of `--worktree` dispatches, one folder per dispatch id. */
  worktrees: string;
}

export function runPaths(home: string, run: string): RunPaths {
  const dir = path.join(home, "runs", requireId("--run", run));
  return {
    run,
    dir,
    runFile: path.join(dir, "run.json"),
    admissionLock: path.join(dir, "admission.lock"),
    dispatches: path.join(dir, "dispatches"),
    live: path.join(dir, "live"),
    worktrees: path.join(dir, "worktrees"),
  };
}

/** Where the worktree of a `--worktree` dispatch lives. */
export function worktreeDir(run: RunPaths, dispatchId: string): string {
  return path.join(run.worktrees, requireId("dispatch id", dispatchId));
}

export function nameDir(run: RunPaths, name: string): string {
  return path.join(run.dispatches, requireId("--name", name));
}

export function dispatchDir(run: RunPaths, name: string, dispatchId: string): string {
  return path.join(nameDir(run, name), requireId("dispatch id", dispatchId));
}
