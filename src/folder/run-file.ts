import { type RunFile, runFileSchema } from "../domain/schemas.js";
import { readJsonFile } from "../infra/json-file.js";
import type { RunPaths } from "../infra/paths.js";

/** run.json as it is (specs/dispatch.md §2, step 1), or null when it is missing or cannot be read. */
export function readRunFile(run: RunPaths): RunFile | null {
  const read = readJsonFile(run.runFile, runFileSchema);
  return read.kind === "ok" ? read.value : null;
}
