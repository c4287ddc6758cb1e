import * as path from "node:path";
import { backendFor } from "../backends/backend-registry.js";
import { resumeProblem } from "../backends/resume.js";
import {
  type CheckFollows,
  type CheckProblem,
  type CheckRunFile,
  checkProblem,
  passedOf,
  type RecordCheck,
  type RecordedCheckRun,
} from "../domain/check/check.js";
import type { AdmitFile, SpecFile } from "../domain/schemas.js";
import { recordTail } from "../domain/text/redact.js";
import type { BackendId, Status } from "../domain/vocab.js";
import { okValue } from "../infra/json-file.js";
import { tailLines } from "../infra/tail.js";
import { endedRun } from "./check-due.js";
import { FILES, fileIn } from "./layout.js";
import { readFolderJson } from "./read.js";

// The record writer's reading of a dispatch's check (`--verify`; specs/dispatch.md, "Checks and races"):
// the run its supervisor wrote to verify.json, the tail of verify.log, the chain's earlier runs, and what
// that makes of an ok turn: still ok (passed), failed kind `verify` (red: a repair turn may follow), or
// failed kind `verify-error` (the check could not judge the turn).

/** The record's `verify`, and what the check makes of the verdict. */
export interface CheckJudged {
  /** The record's field; null without a check (the field is absent). */
  field: RecordCheck | null;
  problem: CheckProblem | null;
}

/** What the judgement needs of the turn: its status before the check, its CLI and its thread. */
export interface CheckedTurn {
  status: Status;
  backend: BackendId;
  thread: string | null;
}

/**
 * The check of a dispatch with one (spec.json `verify`), as its run ended; nothing for one without. A turn
 * that did not end ok keeps its verdict (`passed: null`, no run of its own); an ok turn whose check never
 * ran to an end is `verify-error`, never ok.
 */
export function judgeCheck(
  dir: string,
  files: { spec: SpecFile | null; admit: AdmitFile | null },
  turn: CheckedTurn,
): CheckJudged {
  const check = files.spec?.verify;
  if (check === undefined) return { field: null, problem: null };
  const earlier = earlierRuns(dir, files.admit);
  const run = turn.status === "ok" ? endedRun(dir) : null;
  const outcome = turn.status !== "ok" ? null : (run?.outcome ?? "interrupted");
  const own: RecordedCheckRun[] =
    outcome === null ? [] : [{ dispatchId: dispatchIdOf(dir), outcome, ...runFigures(dir, run) }];
  const field = { command: check.command, passed: passedOf(outcome), runs: [...earlier, ...own] };
  if (outcome === null) return { field, problem: null };
  const problem = checkProblem(
    { command: check.command, outcome, exitCode: run?.exitCode ?? null, timeoutMs: check.timeoutMs },
    whatFollows(files.admit, turn),
  );
  return { field, problem };
}

function runFigures(dir: string, run: CheckRunFile | null) {
  return {
    exitCode: run?.exitCode ?? null,
    durationMs: run?.durationMs ?? null,
    tail: recordTail(tailLines(fileIn(dir, FILES.checkLog), TAIL_SCAN_LINES, TAIL_SCAN_BYTES)),
  };
}

/** The runs of the chain before this attempt: its previous attempt's record's (a follow-up starts anew). */
function earlierRuns(dir: string, admit: AdmitFile | null): RecordedCheckRun[] {
  const previous = admit?.failoverFrom ?? null;
  if (previous === null) return [];
  const record = okValue(readFolderJson(path.join(path.dirname(dir), previous), FILES.record));
  return record?.verify?.runs ?? [];
}

/** What follows a red check: a repair turn while the ladder has some left and the thread can be resumed. */
function whatFollows(admit: AdmitFile | null, turn: CheckedTurn): CheckFollows {
  if ((admit?.ladder?.checkRepairs ?? 0) === 0) return "no-repairs";
  const unresumable = resumeProblem(backendFor(turn.backend), turn.thread);
  return unresumable === null ? "repair" : { unresumable };
}

function dispatchIdOf(dir: string): string {
  return path.basename(dir);
}

/** How much of verify.log is read for its tail: enough lines to find 20 that are not empty. */
const TAIL_SCAN_LINES = 200;
const TAIL_SCAN_BYTES = 64 * 1024;
