import { z } from "zod";
import { bootStamp, isoTime, loose, ms, schemaField, startTime } from "../schema-parts.js";
import { compactDuration } from "../text/duration.js";
import type { ExitReason } from "../vocab.js";

// The check of a dispatch (specs/dispatch.md, "Checks and races"): `--verify CMD`, run after the agent's
// turn ended ok, judges the turn. Its run is verify.json in the folder, written by the supervisor that runs
// it; the record reads it. Pure: what a run's end means, the record's words and the repair turn's brief.

/** The longest check command accepted: it is a shell command line, not a script. */
export const MAX_CHECK_COMMAND_CHARS = 4096;
/** --verify-timeout's default: a test suite's time, with room. */
export const DEFAULT_CHECK_TIMEOUT_MS = 30 * 60_000;
/** --verify-repairs' default, and its most: an agent that cannot make a check pass in five turns will not in six. */
export const DEFAULT_CHECK_REPAIRS = 2;
export const MAX_CHECK_REPAIRS = 5;
/** After the time limit's SIGTERM, how long the check's group has before SIGKILL. */
export const CHECK_KILL_GRACE_MS = 5000;

/**
 * How a run of the check ended: `passed` (exit 0), `failed` (any other exit of the command), `timed-out`
 * (stopped at its time limit), `not-found` (the shell's 127 or 126: the command cannot be run), `slot-busy`
 * (no slot of the machine's lock came free in time), `cancelled` (the dispatch was cancelled while its check
 * ran or waited), `interrupted` (its end was never known: the process that ran it died).
 */
export const CHECK_OUTCOMES = [
  "passed",
  "failed",
  "timed-out",
  "not-found",
  "slot-busy",
  "cancelled",
  "interrupted",
] as const;
export type CheckOutcome = (typeof CHECK_OUTCOMES)[number];

/** spec.json's `verify`: the command, its time limit, and the repair turns the dispatch asked for. */
export const checkSpecField = loose({
  command: z.string().min(1).max(MAX_CHECK_COMMAND_CHARS),
  timeoutMs: z.number().int().positive(),
  /** --verify-repairs as asked (a follow-up asks the same); the chain's turns left are its ladder's. */
  repairs: ms.max(MAX_CHECK_REPAIRS),
});
export type CheckSpec = z.infer<typeof checkSpecField>;

/**
 * verify.json: one run of the check, as it goes (`running`: its wrapper's pid and start time, so that an
 * adopter waits for it rather than run it again) and as it ended.
 */
export const checkRunFileSchema = loose({
  schema: schemaField,
  command: z.string(),
  state: z.enum(["running", "ended"]),
  pid: z.number().int().positive().nullable(),
  startTime,
  startedAt: isoTime,
  startedMono: bootStamp,
  timeoutMs: z.number().int().positive(),
  slotWaitMs: ms.nullable(),
  endedAt: isoTime.nullable(),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  durationMs: ms.nullable(),
  outcome: z.enum(CHECK_OUTCOMES).nullable(),
});
export type CheckRunFile = z.infer<typeof checkRunFileSchema>;

/** One run as the record keeps it. */
export const recordedCheckRunSchema = loose({
  dispatchId: z.string().min(1),
  outcome: z.enum(CHECK_OUTCOMES),
  exitCode: z.number().int().nullable(),
  durationMs: ms.nullable(),
  tail: z.array(z.string()),
});
export type RecordedCheckRun = z.infer<typeof recordedCheckRunSchema>;

/**
 * record.json's `verify`: the command, whether this attempt's run passed (null: the check did not run to a
 * verdict — the agent's turn failed, or the check could not run), and every run of the chain, oldest first.
 */
export const recordCheckField = loose({
  command: z.string(),
  passed: z.boolean().nullable(),
  runs: z.array(recordedCheckRunSchema),
});
export type RecordCheck = z.infer<typeof recordCheckField>;

/** The exit reasons that can be a turn that ended ok: only after them is a check due. */
export function checkMayBeDue(reason: ExitReason): boolean {
  return reason === "exited" || reason === "after-final";
}

/**
 * Whether a dispatch's check is still due: asked for (spec.json `verify`), after an ending that may be ok
 * (exit.json), and its run (verify.json) not ended — so that a reader leaves the record to the supervisor
 * that runs it, or takes it over. The one rule; readers and supervisors give it what they read, and
 * verify.json only when it can decide (`readRun`: most folders have no check, and are read no further).
 */
export function checkStillDue(
  spec: { verify?: unknown } | null,
  exit: { reason: ExitReason } | null,
  readRun: () => { state: string } | null,
): boolean {
  if (spec?.verify === undefined || exit === null || !checkMayBeDue(exit.reason)) return false;
  return readRun()?.state !== "ended";
}

/** What the run's end means: its exit status, or what stopped it first. */
export function checkOutcome(end: {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled?: boolean;
}): CheckOutcome {
  if (end.cancelled === true) return "cancelled";
  if (end.timedOut) return "timed-out";
  if (end.exitCode === 0 && end.signal === null) return "passed";
  if (end.exitCode === 127 || end.exitCode === 126) return "not-found";
  if (end.exitCode === null && end.signal === null) return "interrupted";
  return "failed";
}

/** `passed` of the record: true or false for a check that ran to a verdict, null otherwise. */
export function passedOf(outcome: CheckOutcome | null): boolean | null {
  if (outcome === "passed") return true;
  if (outcome === "failed") return false;
  return null;
}

/** What follows a red check: a repair turn, none left, or none possible (its CLI has no thread to resume). */
export type CheckFollows = "repair" | "no-repairs" | { unresumable: string };

/** Why the check changed an ok ending (null: it passed). */
export interface CheckProblem {
  kind: "verify" | "verify-error" | "cancelled";
  message: string;
}

/**
 * The verdict's words for a check that did not pass: `verify` for a red check (the agent's to fix),
 * `verify-error` for one that could not judge (never the agent's failure), `cancelled` for one a cancel
 * stopped, null for a pass.
 */
export function checkProblem(
  run: { command: string; outcome: CheckOutcome | null; exitCode: number | null; timeoutMs: number },
  follows: CheckFollows,
): CheckProblem | null {
  const what = `the check ${JSON.stringify(shortCommand(run.command))}`;
  switch (run.outcome) {
    case "passed":
      return null;
    case "failed":
      return { kind: "verify", message: `${what} failed (exit code ${run.exitCode})${followWords(follows)}` };
    case "timed-out":
      return cannotJudge(
        `${what} ran past its time limit (${compactDuration(run.timeoutMs)}) and was stopped`,
      );
    case "not-found":
      return cannotJudge(`${what} could not be run (exit code ${run.exitCode}: not found or not executable)`);
    case "slot-busy":
      return cannotJudge(`${what} never got a slot of the machine's lock (catherd lock --status)`);
    case "cancelled":
      return { kind: "cancelled", message: `cancelled while ${what} ran: the agent's work was not judged` };
    default:
      return cannotJudge(`${what} did not run to its end: the process that ran it was lost`);
  }
}

function cannotJudge(message: string): CheckProblem {
  return { kind: "verify-error", message: `${message}; the agent's work was not judged` };
}

function followWords(follows: CheckFollows): string {
  if (follows === "repair") return ": a repair turn follows";
  if (follows === "no-repairs") return "";
  return `; no repair is possible: ${follows.unresumable}`;
}

/** The command as words quote it: its first line, at most 120 characters. */
export function shortCommand(command: string): string {
  const line = command.split("\n")[0] ?? "";
  return line.length > 120 || line !== command ? `${line.slice(0, 119)}…` : line;
}

/** The brief of a repair turn: the check, its exit code and the tail of its output, and what to do. */
export function checkRepairBrief(
  command: string,
  run: { exitCode: number | null; tail: readonly string[] },
): string {
  const tail = run.tail.length === 0 ? "(it printed nothing)" : run.tail.join("\n");
  return [
    `The check that judges your work failed: \`${shortCommand(command)}\` exited with code ${run.exitCode}.`,
    "The last lines of its output:",
    "",
    tail,
    "",
    "Make this check pass: fix the work (not the check), then end your turn. catherd runs the check again when you are done.",
    "",
  ].join("\n");
}

/**
 * The check's result in one word (`--notify`'s CATHERD_VERIFY, the views): `passed`, `failed`, `error` (it
 * ran and could not judge: past its limit, not found, no slot, cancelled, lost), or "" (no check, or none
 * ran: the turn did not end ok).
 */
export function checkWord(
  check: RecordCheck | undefined,
  dispatchId: string,
): "passed" | "failed" | "error" | "" {
  if (check === undefined) return "";
  if (check.passed !== null) return check.passed ? "passed" : "failed";
  return check.runs.at(-1)?.dispatchId === dispatchId ? "error" : "";
}
