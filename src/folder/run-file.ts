import { type RunFile, runFileSchema } from "../domain/schemas.js";
import { type FileRead, okValue, readJsonFile } from "../infra/json-file.js";
import type { RunPaths } from "../infra/paths.js";

// run.json's one reader: every part of catherd that reads the run's file reads it here.

/** run.json as it is (specs/dispatch.md §2, step 1), or null when it is missing or cannot be read. */
export function readRunFile(run: RunPaths): RunFile | null {
  return okValue(readRunFileAsIs(run));
}

/** run.json with why it could not be read (missing, torn, newer): what admission, which rewrites it, needs. */
export function readRunFileAsIs(run: RunPaths): FileRead<RunFile> {
  return readJsonFile(run.runFile, runFileSchema);
}
