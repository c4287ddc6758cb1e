import * as fs from "node:fs";
import * as path from "node:path";
import { backendFor } from "../backends/backend-registry.js";
import { resumeProblem } from "../backends/resume.js";
import { type Ended, type NextStep, nextStep } from "../domain/admission/ladder.js";
import { isValidId } from "../domain/ids.js";
import type { AdmitFile, NextFile, RecordFile } from "../domain/schemas.js";
import type { ErrorKind } from "../domain/vocab.js";
import { okValue } from "../infra/json-file.js";
import { FILES } from "./layout.js";
import { readFolderJson } from "./read.js";

// A chain of attempts (specs/dispatch.md, "The failover ladder") as its folders hold it: each attempt is a
// plain dispatch folder of the same name; admit.json names the attempt before (`failoverFrom`), record.json
// the step after (`next`), and next.json — once the hand-over is done — the folder it handed over to.

/** How far a chain is followed: far more attempts than any ladder makes, few enough to stop a loop. */
const MAX_ATTEMPTS = 64;

/** The next step after an attempt that ended as `record` says, by its admit.json's ladder. */
export function nextStepOf(
  admit: AdmitFile | null,
  record: Pick<RecordFile, "status" | "error" | "endedAt" | "outcome" | "thread">,
): NextStep | null {
  const ladder = admit?.ladder;
  if (ladder === undefined) return null;
  const ended: Ended = {
    rung: ladder.rung,
    ladder: {
      rungs: ladder.rungs,
      retryWithinMs: ladder.retryWithinMs,
      retries: ladder.retries,
      repairs: ladder.repairs ?? 0,
      ...(ladder.checkRepairs === undefined ? {} : { checkRepairs: ladder.checkRepairs }),
      ...(ladder.accountMoves === undefined ? {} : { accountMoves: ladder.accountMoves }),
    },
    status: record.status,
    kind: (record.error?.kind ?? null) as ErrorKind | null,
    retryAfter: record.error?.retryAfter ?? null,
    endedAt: record.endedAt,
    outcome: record.outcome?.status ?? null,
    // A repair resumes the attempt's thread: only one its CLI can resume (the check a follow-up meets too).
    thread: resumeProblem(backendFor(ladder.rung.backend), record.thread) === null ? record.thread : null,
    pool: admit?.accounts?.pool.length ?? 1,
  };
  return nextStep(ended);
}

/** next.json of a folder, or null when the hand-over is not done (or the file is unreadable). */
export function readNext(dir: string): NextFile | null {
  return okValue(readFolderJson(dir, FILES.next));
}

/** The folder of the attempt next.json hands over to, in the same name's folder; null when there is none. */
export function nextAttemptDir(dir: string, next: NextFile | null = readNext(dir)): string | null {
  if (next === null || next.dispatchId === null || !isValidId(next.dispatchId)) return null;
  const candidate = path.join(path.dirname(dir), next.dispatchId);
  return fs.existsSync(candidate) ? candidate : null;
}

/**
 * Whether a recorded attempt still hands its chain on: its record names a `next` and next.json is not
 * written yet. Such an attempt keeps its chain live (its name, its live marker) until the hand-over.
 */
export function handOverPending(dir: string, record: RecordFile | null): boolean {
  return record?.next != null && !fs.existsSync(path.join(dir, FILES.next));
}

/** The chain's last attempt from `dir` on: next.json followed as far as it leads. */
export function lastAttemptDir(dir: string): string {
  let current = dir;
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    const next = nextAttemptDir(current);
    if (next === null) return current;
    current = next;
  }
  return current;
}

/** Every attempt of the chain `dir` belongs to, first to last (failoverFrom back, next.json forward). */
export function attemptDirs(dir: string): string[] {
  const before: string[] = [];
  let current = dir;
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    const admit = okValue(readFolderJson(current, FILES.admit));
    const from = admit?.failoverFrom;
    if (from == null || !isValidId(from)) break;
    const previous = path.join(path.dirname(current), from);
    if (!fs.existsSync(previous)) break;
    before.unshift(previous);
    current = previous;
  }
  const after: string[] = [];
  current = dir;
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    const next = nextAttemptDir(current);
    if (next === null) break;
    after.push(next);
    current = next;
  }
  return [...before, dir, ...after];
}
