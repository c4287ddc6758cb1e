import * as os from "node:os";
import * as path from "node:path";
import { isValidId, requireId } from "../domain/ids.js";

// Where things live (specs/dispatch-folder.md, "The dispatch folder"): the one place that knows the layout of
// a home and of a run — `<home>/runs/<run>/{run.json, admission.lock, live/, dispatches/<name>/<id>/,
// dispatches/<name>/latest, worktrees/<id>/, spend/<id>.json, spent.json, spend-now.json, spend.lock}`. Every path below a run is built from validated ids, so no
// name or id can reach outside its run.

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
  /** The home the run is in. */
  home: string;
  dir: string;
  runFile: string;
  admissionLock: string;
  dispatches: string;
  /** Markers of admitted, not yet recorded dispatches: admission reads only these. */
  live: string;
  /** The git worktrees of `--worktree` dispatches, one folder per dispatch id. */
  worktrees: string;
  /** The run's spend ledger (src/folder/run-ledger.ts): a file per dispatch not yet folded, */
  spend: string;
  /** … the recorded ones folded, */
  spentFile: string;
  /** … the run's whole spend as last summed, */
  spendNow: string;
  /** … and the lock a fold or a sum is made under. */
  spendLock: string;
}

/** The file beside a name's dispatch folders that names its newest one. Not a dispatch id. */
export const LATEST_FILE = "latest";

/** `<home>/runs`: every run of the home. */
export function runsDir(home: string): string {
  return path.join(home, "runs");
}

export function runPaths(home: string, run: string): RunPaths {
  const dir = path.join(runsDir(home), requireId("--run", run));
  return {
    run,
    home,
    dir,
    runFile: path.join(dir, "run.json"),
    admissionLock: path.join(dir, "admission.lock"),
    dispatches: path.join(dir, "dispatches"),
    live: path.join(dir, "live"),
    worktrees: path.join(dir, "worktrees"),
    spend: path.join(dir, "spend"),
    spentFile: path.join(dir, "spent.json"),
    spendNow: path.join(dir, "spend-now.json"),
    spendLock: path.join(dir, "spend.lock"),
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

/**
 * The run whose folder is `runDir` (`<home>/runs/<run>`), or null when the path is not laid out so (its
 * parent is not `runs`, or its name is not a valid run id).
 */
export function runPathsOfRunDir(runDir: string): RunPaths | null {
  const resolved = path.resolve(runDir);
  const run = path.basename(resolved);
  const runs = path.dirname(resolved);
  if (path.basename(runs) !== "runs" || !isValidId(run)) return null;
  return runPaths(path.dirname(runs), run);
}

/** `<name>/latest`: the id of the name's newest dispatch. */
export function latestFile(run: RunPaths, name: string): string {
  return path.join(nameDir(run, name), LATEST_FILE);
}

/** A dispatch's file in its run's spend ledger (src/folder/run-ledger.ts). */
export function spendFile(run: RunPaths, dispatchId: string): string {
  return path.join(run.spend, `${requireId("dispatch id", dispatchId)}.json`);
}

/** The live marker of a dispatch (src/folder/markers.ts). */
export function liveMarkerFile(run: RunPaths, dispatchId: string): string {
  return path.join(run.live, `${requireId("dispatch id", dispatchId)}.json`);
}
