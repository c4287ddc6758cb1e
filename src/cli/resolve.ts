import { locateDispatch } from "../dispatch/read/locate.js";
import { CatherdError } from "../domain/errors.js";
import { catherdHome, type RunPaths, runName, runPaths } from "../infra/paths.js";
import { type ParsedInput, stringOption } from "./kit.js";

/** The run a read command looks in. */
export function runPathsOf(input: ParsedInput): RunPaths {
  return runPaths(catherdHome(), runName(stringOption(input, "run")));
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
