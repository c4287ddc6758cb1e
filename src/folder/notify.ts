import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { isValidId } from "../domain/ids.js";
import { BUDGETS_FILE_NAME } from "../domain/quota/period-budget.js";
import { SCHEMA_VERSION } from "../domain/schema-version.js";
import type { RecordFile } from "../domain/schemas.js";
import { createJsonExclusive } from "../infra/atomic.js";
import { okValue } from "../infra/json-file.js";
import { startTimeOf } from "../infra/process-identity.js";
import { programFile } from "../infra/programs.js";
import { readNext } from "./chain.js";
import { FILES, fileIn, runOf } from "./layout.js";
import { readFolderJson } from "./read.js";
import { readRunFile } from "./run-file.js";
import { createFolderJson } from "./write.js";

// A dispatch's notification (specs/dispatch-folder.md, "notify.json"): once the dispatch is recorded — a
// chain, once the chain ends — the commands of its `--notify` and its run's `--run-notify` run once each.
// Whoever ends the chain (the supervisor writing the record, a reader recording a dead dispatch, the
// hand-over that stops a chain) calls `notifyIfEnded` and goes on at once: the commands run in the
// notifier program, started detached, so that a command that hangs delays no supervisor, promoter or
// verb. The notifier claims the notification by creating notify.json exclusively: however many processes
// start one, the commands run once. A live marker outlives the record until this hook was called, so that
// a recorder killed in between leaves the notification to the reader that removes the stale marker.

/** A command to run, and where it was given. */
export interface NotifyCommand {
  source: "dispatch" | "run";
  command: string;
}

/** How far back a chain is followed to its first attempt (as folder/chain.ts follows it). */
const MAX_ATTEMPTS = 64;

/** The value of CATHERD_DISPATCH the notifier and its commands carry: how their stop finds them. */
export function notifySweepId(dir: string): string {
  return `${path.basename(dir)}.notify`;
}

/**
 * The CATHERD_DISPATCH of the notifier that gives a budget's warning, and of its commands: one of its own,
 * so that it and the record's notifier, running at once, do not wait for each other's processes.
 */
export function budgetSweepId(dir: string): string {
  return `${path.basename(dir)}.budget-warning`;
}

/**
 * Whether the chain of the recorded attempt `dir` ends there: its record names no next attempt, or its
 * hand-over stopped (next.json names none: cancelled, or the next attempt was refused).
 */
export function chainEndsAt(dir: string, record: Pick<RecordFile, "next"> | null): boolean {
  if (record === null) return false;
  if (record.next == null) return true;
  const next = readNext(dir);
  return next !== null && next.dispatchId === null;
}

/**
 * The commands to run when the chain of `dir` ends: the `--notify` its first attempt was given, then the
 * run's `--run-notify` as run.json says now; one command given as both runs once.
 */
export function notifyCommandsOf(dir: string): NotifyCommand[] {
  const commands: NotifyCommand[] = [];
  const own = okValue(readFolderJson(firstAttemptDir(dir), FILES.admit))?.notify;
  if (own != null) commands.push({ source: "dispatch", command: own });
  const runPaths = runOf(dir);
  const run = runPaths === null ? null : readRunFile(runPaths);
  if (run?.notify != null && run.notify !== own) commands.push({ source: "run", command: run.notify });
  return commands;
}

/** The chain's first attempt, by admit.json's failoverFrom. */
function firstAttemptDir(dir: string): string {
  let current = dir;
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    const from = okValue(readFolderJson(current, FILES.admit))?.failoverFrom;
    if (from == null || !isValidId(from)) return current;
    const previous = path.join(path.dirname(current), from);
    if (!fs.existsSync(previous)) return current;
    current = previous;
  }
  return current;
}

/**
 * The hook, called once a record (or a stopped hand-over) is written: starts the notifier for `dir` when
 * its chain ends there, it has a command, and no notifier claimed it yet. Costs a dispatch without a
 * command a few small reads. Never throws: a notification must not fail a record.
 */
export function notifyIfEnded(dir: string, record: Pick<RecordFile, "next"> | null = null): void {
  try {
    if (fs.existsSync(fileIn(dir, FILES.notify))) return;
    const recorded = record ?? okValue(readFolderJson(dir, FILES.record));
    if (!chainEndsAt(dir, recorded) || notifyCommandsOf(dir).length === 0) return;
    startNotifier(dir);
  } catch {
    // see above: the next reader that finds the stale live marker tries again
  }
}

/**
 * The hook of the budgets by period (specs/quota.md, "Budgets by period"), called once a record is
 * written: when the home declares budgets and the dispatch has a command, starts the notifier with
 * `--budgets`, which warns of each budget covering it whose period is at 80 % or more, once per budget
 * and period. A home without budgets.json pays one failed stat. Never throws.
 */
export function warnBudgetsIfDue(dir: string): void {
  try {
    const run = runOf(dir);
    if (run === null || !fs.existsSync(path.join(run.home, BUDGETS_FILE_NAME))) return;
    if (notifyCommandsOf(dir).length === 0) return;
    startNotifier(dir, ["--budgets"], budgetSweepId(dir));
  } catch {
    // a warning must not fail a record
  }
}

/**
 * A steerable dispatch asked a question (specs/steering.md, "Questions"): its commands run once for it,
 * with CATHERD_STATUS=question, while the dispatch waits. Never throws.
 */
export function notifyQuestion(dir: string, questionId: string): void {
  try {
    if (notifyCommandsOf(dir).length === 0) return;
    startNotifier(dir, ["--question", questionId]);
  } catch {
    // a notification must not fail the supervision
  }
}

/** The claim of a question's notification: questions/<id>.notify.json, created exclusively. */
export function claimQuestionNotification(dir: string, questionId: string, at: Date): boolean {
  return createJsonExclusive(path.join(dir, FILES.questions, `${questionId}.notify.json`), {
    schema: SCHEMA_VERSION,
    at: at.toISOString(),
    by: { pid: process.pid, startTime: startTimeOf(process.pid) },
  });
}

/** Starts the notifier program on `dir`, detached in its own session, owing nothing to this process. */
function startNotifier(dir: string, extra: readonly string[] = [], sweepId = notifySweepId(dir)): void {
  const child = spawn(process.execPath, [programFile("notifier", import.meta.url), dir, ...extra], {
    detached: true,
    stdio: "ignore",
    cwd: dir,
    // Whatever this process carries (a reader run by an agent carries that agent's id) must not follow.
    env: { ...process.env, CATHERD_DISPATCH: sweepId },
  });
  child.once("error", () => {});
  child.unref();
}

/** The notifier's claim: notify.json, created exclusively. False when another notifier has it. */
export function claimNotification(dir: string, commands: readonly NotifyCommand[], at: Date): boolean {
  return createFolderJson(dir, FILES.notify, {
    at: at.toISOString(),
    by: { pid: process.pid, startTime: startTimeOf(process.pid) },
    commands: commands.map((c) => c.source),
  });
}
