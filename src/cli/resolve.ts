import { existingRun, locateDispatch } from "../dispatch/read/locate.js";
import { CatherdError } from "../domain/errors.js";
import { findRace, type RaceRead } from "../folder/race.js";
import { catherdHome, type RunPaths, runName, runPaths } from "../infra/paths.js";
import { type ParsedInput, stringOption } from "./command-io.js";

/**
 * The run a read command looks in: `--run`, else `$CATHERD_RUN`, else `default`. A run named by either
 * that does not exist is E_RUN_NOT_FOUND; the default run of a fresh home is an empty run.
 */
export function runPathsOf(input: ParsedInput, env: NodeJS.ProcessEnv = process.env): RunPaths {
  const flag = stringOption(input, "run");
  const named = flag !== undefined || (env.CATHERD_RUN !== undefined && env.CATHERD_RUN !== "");
  return existingRun(runPaths(catherdHome(env), runName(flag, env)), named);
}

/** The `<name|id|dir>` a command was given, or E_INPUT_INVALID with the usage as the fix. */
export function refOf(input: ParsedInput, verb: string): string {
  const ref = input.positionals[0];
  if (ref === undefined) {
    throw new CatherdError("E_INPUT_INVALID", "missing <name|id|dir>", { fix: `catherd ${verb} <name>` });
  }
  return ref;
}

/** The folder of `<name|id|dir>` in the command's run. */
export function dispatchDirOf(input: ParsedInput, ref: string): string {
  return locateDispatch(runPathsOf(input), ref);
}

/**
 * The race `ref` names in the command's run (dispatch/race.ts, findRace), or null: a plain name, an id or
 * a folder is a dispatch's.
 */
export function raceOf(input: ParsedInput, ref: string): RaceRead | null {
  if (ref.includes("/")) return null;
  return findRace(runPathsOf(input), ref);
}
