import { type CheckRunFile, checkStillDue } from "../domain/check/check.js";
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

/** Whether the folder's check is still due (check.ts `checkStillDue`), verify.json read now. */
export function checkDue(dir: string, spec: SpecFile | null, exit: ExitFile | null): boolean {
  return checkStillDue(spec, exit, () => okValue(readFolderJson(dir, FILES.check)));
}
