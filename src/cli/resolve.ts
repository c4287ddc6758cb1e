import { locateDispatch } from "../dispatch/locate.js";
import { catherdHome, type RunPaths, runName, runPaths } from "../infra/paths.js";
import { type ParsedInput, stringOption } from "./kit.js";

/** The run a read command looks in. */
export function runOf(input: ParsedInput): RunPaths {
  return runPaths(catherdHome(), runName(stringOption(input, "run")));
}

/** The folder of `<name|id|dir>` in the command's run. */
export function dispatchDirOf(input: ParsedInput, ref: string): string {
  return locateDispatch(runOf(input), ref);
}
