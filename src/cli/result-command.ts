import { conversationOf, type Turn } from "../dispatch/follow-up/conversation.js";
import { raceResult } from "../dispatch/race.js";
import type { AttemptSummary } from "../dispatch/read/attempts.js";
import { resultOf } from "../dispatch/result.js";
import { checkWord, shortCommand } from "../domain/check/check.js";
import { errorsText } from "../domain/ending/answer-contract.js";
import { outcomeText } from "../domain/ending/declared-outcome.js";
import { recordHeadline, whyLine } from "../domain/ending/record-words.js";
import { CatherdError } from "../domain/errors.js";
import type { RecordFile } from "../domain/schemas.js";
import { compactDuration } from "../domain/text/duration.js";
import { inertText } from "../domain/text/inert-text.js";
import { markSeen } from "../folder/markers.js";
import { changedOutsideOwns } from "../folder/outside-owns.js";
import type { RaceRead } from "../folder/race.js";
import { systemClock } from "../infra/clock.js";
import { type Command, type ParsedInput, RUN_OPTION } from "./command-io.js";
import { conversationText } from "./conversation-text.js";
import { leftBehindLines } from "./left-behind.js";
import { type RaceData, raceData, raceText } from "./race-text.js";
import { dispatchDirOf, raceOf, refOf, runPathsOf } from "./resolve.js";
import { spendLines, spendWords } from "./spend-text.js";

/**
 * `result --json`: record.json as written, every attempt of its chain (one for a plain dispatch), and the
 * changed files its patch leaves out, outside its --owns (empty without --owns; null when unknown).
 */
export type ResultData = RecordFile & { attempts: AttemptSummary[]; changedOutsideOwns: string[] | null };

/** `result --conversation --json`: every turn of the dispatch's conversation, first to last. */
export type ConversationData = { conversation: Turn[] };

/** `result NAME --json` of a race (specs/cli.md, "A race"): a row per attempt, and its winner. */
export type RaceResultData = { race: RaceData };

export const resultCommand: Command<ResultData | ConversationData | RaceResultData> = {
  name: "result",
  synopsis: "<name|id|dir>",
  positionals: 1,
  summary:
    "The record of a finished dispatch and its reply; for a chain of attempts (--fallback), the record of " +
    "its last attempt once the chain has ended (E_NOT_RECORDED while it goes on).",
  json:
    "record.json as written (it holds the reply), `attempts`: every attempt of the chain with how it ended, " +
    "and `changedOutsideOwns`: the changed files outside its --owns, which its patch leaves out",
  options: {
    run: RUN_OPTION,
    conversation: {
      type: "boolean",
      description:
        "every turn of its conversation (the dispatch and its follow-ups, --follow-up): when, how it ended, its brief's first line and its reply",
    },
    answer: {
      type: "boolean",
      description:
        "print only the answer (--answer-schema) as JSON, for jq; E_NO_ANSWER when the record has none",
    },
  },
  async handler(input) {
    const ref = refOf(input, "result");
    const race = raceOf(input, ref);
    if (race !== null) return raceResultAnswer(input, race);
    if (input.values.conversation === true) {
      const turns = conversationOf(dispatchDirOf(input, ref));
      return { data: { conversation: turns }, text: conversationText(turns) };
    }
    const { view, record, attempts, stopped } = await resultOf(dispatchDirOf(input, ref));
    const outside = changedOutsideOwns(record.changedFiles, view.admit?.git?.prefix, view.admit?.owns ?? []);
    const data = { ...record, attempts, changedOutsideOwns: outside };
    // The answer alone on stdout (--json keeps the record, which holds it as `answer`).
    if (input.values.answer === true)
      return { data, text: `${JSON.stringify(answerOf(record, ref), null, 2)}\n` };
    const text = [
      recordLine(record),
      ...outcomeLines(record),
      ...checkLines(record),
      ...(attempts.length > 1 ? [`attempts: ${attempts.map(attemptWords).join(" → ")}`] : []),
      ...(stopped === null
        ? []
        : [`chain stopped: ${stopped.stopped}${stopped.message === null ? "" : ` — ${stopped.message}`}`]),
      ...spendLines(record, view.spec),
      ...answerLines(record),
      ...errorLines(record, systemClock.wallNow().getTime()),
      ...leftBehindLines(record, view.spec, view.admit),
      "",
      record.reply === null ? "(no reply)" : inertText(record.reply),
    ];
    return { data, text: `${text.join("\n")}\n` };
  },
};

/**
 * `result NAME` of a race: one row per attempt and the winner, once it is decided (E_NOT_RECORDED before).
 * `--answer` and `--conversation` are a dispatch's: the winner's name gives them.
 */
async function raceResultAnswer(
  input: ParsedInput,
  read: RaceRead,
): Promise<{ data: RaceResultData; text: string }> {
  const name = read.race.name;
  if (input.values.answer === true || input.values.conversation === true) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `${name} is a race: --answer and --conversation read one dispatch`,
      { fix: `catherd result ${name} names the winner; then catherd result --answer <winner>` },
    );
  }
  const settled = await raceResult(runPathsOf(input), read);
  if (settled.decision.winner !== null) {
    const winner = settled.standings.find((s) => s.attempt === settled.decision.winner);
    if (winner !== undefined) markSeen(winner.dir, systemClock.wallNow());
  }
  const race = raceData(read, settled);
  return { data: { race }, text: raceText(race) };
}

/**
 * The record's answer (specs/record.md, "The answer"): its value when it fit the schema — `null` too, for a
 * schema that allows it — else E_NO_ANSWER saying why there is none.
 */
function answerOf(record: RecordFile, ref: string): unknown {
  const readReply = `read the reply with: catherd result ${ref}`;
  if (record.answer === undefined) {
    throw new CatherdError(
      "E_NO_ANSWER",
      `${ref} was dispatched without --answer-schema: its record has no answer`,
      {
        fix: `dispatch with --answer-schema <file>, or ${readReply}`,
      },
    );
  }
  if (record.answerErrors != null && record.answerErrors.length > 0) {
    throw new CatherdError(
      "E_NO_ANSWER",
      `${ref}'s answer did not fit its schema: ${errorsText(record.answerErrors)}`,
      {
        fix: `${readReply} (--json: answerErrors)`,
      },
    );
  }
  if (record.status !== "ok") {
    const why = record.error?.kind == null ? record.status : `${record.status}, ${record.error.kind}`;
    throw new CatherdError("E_NO_ANSWER", `${ref} ended ${why}: it gave no answer`, { fix: readReply });
  }
  return record.answer;
}

/** The most of an answer the text output shows on its line: `--answer` prints it whole. */
const ANSWER_LINE_CHARS = 500;

/** "answer: {"verdict":"pass"} (catherd result --answer …)" for a record whose answer fit its schema. */
function answerLines(record: RecordFile): string[] {
  if (record.answer === undefined || record.status !== "ok" || record.answerErrors != null) return [];
  const text = JSON.stringify(record.answer) ?? "null";
  const shown = text.length > ANSWER_LINE_CHARS ? `${text.slice(0, ANSWER_LINE_CHARS)}…` : text;
  return [
    `answer: ${inertText(shown)} (all of it: catherd result --answer ${record.name ?? record.dispatchId})`,
  ];
}

/** "codex quota", "claude-code ok". */
function attemptWords(a: AttemptSummary): string {
  return `${a.backend ?? "?"} ${a.status === "ok" ? "ok" : (a.kind ?? a.status ?? "?")}`;
}

/**
 * Why a record is not ok, for people: "error: rate-limit, retry after 14:05 — ‹message›" (the retry time
 * also in full), then the tail of stderr.log.
 */
export function errorLines(r: RecordFile, nowMs: number, options: { tail?: boolean } = {}): string[] {
  if (r.error === null || r.status === "ok") return [];
  // A record is written inert, but one written by hand (or by another program) is printed inert too.
  const lines = [`error: ${inertText(whyLine(r.error, nowMs))}`];
  if (r.error.retryAfter != null) lines.push(`retry after: ${inertText(r.error.retryAfter)}`);
  const tail = r.error.tail ?? [];
  // A check's failure carries the check's output, not the agent's stderr (specs/record.md, "verify").
  const whose =
    r.error.kind === "verify" || r.error.kind === "verify-error" ? "the check's output" : "stderr";
  if (options.tail !== false && tail.length > 0)
    lines.push(`${whose} (last lines):`, ...tail.map((l) => `  ${inertText(l)}`));
  return lines;
}

/**
 * The check (`--verify`) beside the verdict: "check: passed — npm test (runs: failed 41s, passed 40s)";
 * nothing for a dispatch without one.
 */
export function checkLines(r: Pick<RecordFile, "verify" | "dispatchId">): string[] {
  if (r.verify === undefined) return [];
  const word = checkWord(r.verify, r.dispatchId) || "not run (the turn did not end ok)";
  const runs = r.verify.runs.map(
    (run) => `${run.outcome}${run.durationMs === null ? "" : ` ${compactDuration(run.durationMs)}`}`,
  );
  const ran = runs.length === 0 ? "" : ` (runs: ${runs.join(", ")})`;
  return [`check: ${word} — ${inertText(shortCommand(r.verify.command))}${ran}`];
}

/**
 * The worker's declared outcome (`--outcome`), beside the verdict: "outcome: blocked — no key (the
 * worker's word)"; asked for and missing, says so; nothing for a dispatch not asked for one.
 */
export function outcomeLines(r: Pick<RecordFile, "outcome">): string[] {
  if (r.outcome === undefined) return [];
  if (r.outcome === null)
    return ["outcome: none — the final message carried no STATUS line (asked for with --outcome)"];
  return [`outcome: ${inertText(outcomeText(r.outcome))} (the worker's word)`];
}

/** " · blocked", " · no outcome" after a record's line; "" for a dispatch not asked for one. */
export function outcomeSuffix(r: Pick<RecordFile, "outcome">): string {
  if (r.outcome === undefined) return "";
  return ` · ${r.outcome === null ? "no outcome" : r.outcome.status}`;
}

/**
 * One line about a record: "fix-tests 20261129T081530Z-k3x9qa ok (exited) 42s 20.3k tokens $0.0137
 * (claude-code's figure)" — a cost catherd priced reads "~$0.0124 (estimate)".
 */
export function recordLine(r: RecordFile): string {
  return `${recordHeadline(r)}${spendWords(r)}`;
}
