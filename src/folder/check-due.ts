import { type CheckRunFile, checkMayBeDue } from "../domain/check/check.js";
import type { ExitFile, SpecFile } from "../domain/schemas.js";
import { okValue } from "../infra/json-file.js";
import { FILES } from "./layout.js";
import { readFolderJson } from "./read.js";

// Whether a dispatch's check (`--verify`) is still due: read by its supervisor as it starts and by every
// reader, so kept apart from the record's judgement of it (judge-check.ts), which loads the backends.

/** verify.json when its run ended; null when it never started, or its end was never written. */
export function endedRun(dir: string): CheckRunFile | null {
  const run = okValue(readFolderJson(dir, FILES.check));
  return run?.state === "ended" ? run : null;
}

/**
 * Whether the folder's check is still due — asked for, after an ending that may be ok, and not ended in
 * verify.json — so that a reader leaves the record to the supervisor that runs it (or takes it over).
 */
export function checkDue(dir: string, spec: SpecFile | null, exit: ExitFile | null): boolean {
  if (spec?.verify === undefined || exit === null || !checkMayBeDue(exit.reason)) return false;
  return endedRun(dir) === null;
}
