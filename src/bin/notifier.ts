#!/usr/bin/env node
import * as fs from "node:fs";
import * as path from "node:path";
import { budgetWarnings } from "../dispatch/read/period-standings.js";
// The notifier program: `node notifier.js <dispatch-dir>`. Whoever ends a dispatch's chain starts it,
// detached (src/folder/notify.ts); `… <dispatch-dir> --question <id>`, the supervisor of a steerable
// dispatch that asked a question (specs/steering.md: CATHERD_STATUS=question, claimed by the question's
// own notify file); `… <dispatch-dir> --budgets`, the record writer in a home with budgets by period
// (specs/quota.md: CATHERD_STATUS=budget-warning, claimed per budget and period in budgets-warned/). It claims the notification (notify.json, created exclusively: a second
// notifier exits at once), then runs each command — the dispatch's --notify, then the run's --run-notify
// — with `sh -c`, the record's JSON on stdin and CATHERD_RECORD, CATHERD_NAME, CATHERD_STATUS,
// CATHERD_KIND, CATHERD_OUTCOME, CATHERD_OUTCOME_WHY, CATHERD_VERIFY and CATHERD_RUN in its environment, each within its
// own timeout, appending what it printed and how it ended to notify.log. Nothing here writes the record:
// a command that fails or hangs changes nothing but notify.log. Exit 0 (a second notifier too), 1 with
// the error on stderr (lost: stdio is ignored by whoever started it).
import { checkWord } from "../domain/check/check.js";
import type { RecordFile } from "../domain/schemas.js";
import { FILES, fileIn, runOf } from "../folder/layout.js";
import {
  budgetSweepId,
  claimNotification,
  claimQuestionNotification,
  type NotifyCommand,
  notifyCommandsOf,
  notifySweepId,
} from "../folder/notify.js";
import { readQuestion } from "../folder/question-files.js";
import { readFolderJson } from "../folder/read.js";
import { appendLine } from "../infra/atomic.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { okValue } from "../infra/json-file.js";
import { reportError } from "../infra/report-error.js";
import { type HookOutcome, runShellHook } from "../infra/shell-hook.js";
import { claimBudgetWarning } from "../quota/budgets.js";

/** Each command's own deadline; CATHERD_NOTIFY_TIMEOUT_MS overrides it (whole milliseconds). */
const NOTIFY_TIMEOUT_MS = 30_000;
/** Between SIGTERM and SIGKILL of a command past its deadline. */
const NOTIFY_KILL_GRACE_MS = 2_000;
/** What a command may print into notify.log; the rest is counted, not kept. */
const NOTIFY_MAX_OUTPUT_BYTES = 256 * 1024;

const LABEL: Record<NotifyCommand["source"], string> = {
  dispatch: "--notify of the dispatch",
  run: "--run-notify of the run",
};

async function notifierMain(args: readonly string[], clock: Clock): Promise<number> {
  const [given, flag, questionId] = args;
  if (given === undefined) throw new TypeError("usage: notifier <dispatch-dir> [--question <id>]");
  const dir = path.resolve(given);
  if (flag === "--question" && questionId !== undefined) return notifyOfQuestion(dir, questionId, clock);
  if (flag === "--budgets") return warnOfBudgets(dir, clock);
  const recordFile = fileIn(dir, FILES.record);
  const record = okValue(readFolderJson(dir, FILES.record));
  if (record === null) throw new TypeError(`${recordFile} is missing or unreadable`);
  const commands = notifyCommandsOf(dir);
  if (commands.length === 0 || !claimNotification(dir, commands, clock.wallNow())) return 0;
  await runCommands(dir, commands, clock, {
    env: commandEnv(dir, recordFile, record),
    stdin: fs.readFileSync(recordFile, "utf8"),
    about: "",
  });
  return 0;
}

/**
 * A question of a steerable dispatch (specs/steering.md): each command once, with CATHERD_STATUS=question,
 * CATHERD_QUESTION (its id) and CATHERD_ASKS, the question's JSON on stdin.
 */
async function notifyOfQuestion(dir: string, questionId: string, clock: Clock): Promise<number> {
  const entry = readQuestion(dir, questionId);
  if (entry === null) throw new TypeError(`${dir} has no question ${questionId}`);
  const commands = notifyCommandsOf(dir);
  if (commands.length === 0 || !claimQuestionNotification(dir, questionId, clock.wallNow())) return 0;
  const admit = okValue(readFolderJson(dir, FILES.admit));
  await runCommands(dir, commands, clock, {
    env: {
      ...process.env,
      CATHERD_DISPATCH: notifySweepId(dir),
      CATHERD_NAME: admit?.name ?? path.basename(dir),
      CATHERD_STATUS: "question",
      CATHERD_QUESTION: questionId,
      CATHERD_ASKS: entry.question.asks,
      CATHERD_RUN: admit?.run ?? "",
    },
    stdin: `${JSON.stringify(entry.question)}\n`,
    about: ` (question ${questionId})`,
  });
  return 0;
}

/**
 * The budgets by period (specs/quota.md): each budget covering the recorded dispatch whose period of its
 * admission is at 80 % or more is claimed (budgets-warned/, created exclusively: once per budget and
 * period, whoever claims it), then each command runs once with CATHERD_STATUS=budget-warning and
 * CATHERD_BUDGET_WARNING=`<scope>/<period> <used> of <limit>`, the record's JSON on stdin.
 */
async function warnOfBudgets(dir: string, clock: Clock): Promise<number> {
  const recordFile = fileIn(dir, FILES.record);
  const record = okValue(readFolderJson(dir, FILES.record));
  const run = runOf(dir);
  const commands = notifyCommandsOf(dir);
  if (record === null || run === null || commands.length === 0) return 0;
  const now = clock.wallNow();
  for (const warning of budgetWarnings(run.home, record, now.getTime())) {
    if (!claimBudgetWarning(run.home, warning.budget, warning.periodKey, now)) continue;
    await runCommands(dir, commands, clock, {
      env: {
        ...commandEnv(dir, recordFile, record),
        CATHERD_DISPATCH: budgetSweepId(dir),
        CATHERD_STATUS: "budget-warning",
        CATHERD_BUDGET_WARNING: warning.text,
      },
      sweepId: budgetSweepId(dir),
      stdin: fs.readFileSync(recordFile, "utf8"),
      about: ` (budget warning ${warning.budget.scope}/${warning.budget.per})`,
    });
  }
  return 0;
}

/**
 * Runs each command in turn with `sh -c`, within its own timeout, what it prints and how it ended appended
 * to notify.log under its label (and `about`: which notification).
 */
async function runCommands(
  dir: string,
  commands: readonly NotifyCommand[],
  clock: Clock,
  given: { env: NodeJS.ProcessEnv; stdin: string; about: string; sweepId?: string },
): Promise<void> {
  const logFile = fileIn(dir, FILES.notifyLog);
  for (const { source, command } of commands) {
    const label = `${LABEL[source]}${given.about}`;
    appendLine(logFile, `${clock.wallNow().toISOString()} ${label}: started`);
    const outcome = await runShellHook(
      {
        command,
        env: given.env,
        sweepId: given.sweepId ?? notifySweepId(dir),
        stdin: given.stdin,
        cwd: dir,
        logFile,
        timeoutMs: timeoutMs(),
        killGraceMs: NOTIFY_KILL_GRACE_MS,
        maxOutputBytes: NOTIFY_MAX_OUTPUT_BYTES,
      },
      clock,
    );
    appendLine(logFile, `${clock.wallNow().toISOString()} ${label}: ${outcomeText(outcome)}`);
  }
}

/** The command's environment: the notifier's (its recorder's), with the record's facts. */
function commandEnv(dir: string, recordFile: string, record: RecordFile): NodeJS.ProcessEnv {
  return {
    ...process.env,
    CATHERD_DISPATCH: notifySweepId(dir),
    CATHERD_RECORD: recordFile,
    CATHERD_NAME: record.name ?? record.dispatchId,
    CATHERD_STATUS: record.status,
    CATHERD_KIND: record.error?.kind ?? "",
    // The worker's declared outcome (--outcome), empty when none: its word, beside CATHERD_STATUS.
    CATHERD_OUTCOME: record.outcome?.status ?? "",
    CATHERD_OUTCOME_WHY: record.outcome?.why ?? "",
    // The check's word (--verify): passed, failed, error; empty without one, or when none ran.
    CATHERD_VERIFY: checkWord(record.verify, record.dispatchId),
    CATHERD_RUN: record.run ?? "",
  };
}

function timeoutMs(): number {
  const given = Number(process.env.CATHERD_NOTIFY_TIMEOUT_MS);
  return Number.isInteger(given) && given > 0 ? given : NOTIFY_TIMEOUT_MS;
}

/** "exit code 0 after 120 ms", "timed out after 30000 ms: stopped (…)". */
function outcomeText(o: HookOutcome): string {
  const dropped = o.droppedBytes > 0 ? `; ${o.droppedBytes} bytes of output not kept` : "";
  if (o.error !== null) return `could not start: ${o.error}`;
  const how = o.signal !== null ? `killed by ${o.signal}` : o.code !== null ? `exit code ${o.code}` : "ended";
  if (!o.timedOut) return `${how} after ${o.durationMs} ms${dropped}`;
  const stop = o.stop;
  const stopped =
    stop === null
      ? "stopped"
      : `stopped (${[stop.term ? "SIGTERM" : null, stop.kill ? "SIGKILL" : null, stop.swept > 0 ? `${stop.swept} swept` : null].filter((p) => p !== null).join(", ") || "nothing left"})`;
  return `timed out after ${o.durationMs} ms: ${stopped}${o.code !== null || o.signal !== null ? `, the command itself: ${how}` : ""}${dropped}`;
}

notifierMain(process.argv.slice(2), systemClock).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(reportError(error, false)),
);
