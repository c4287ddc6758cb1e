import { conversationOf, type Turn } from "../dispatch/follow-up/conversation.js";
import type { AttemptSummary } from "../dispatch/read/attempts.js";
import { resultOf } from "../dispatch/result.js";
import { outcomeText } from "../domain/declared-outcome.js";
import { inertText } from "../domain/inert-text.js";
import { recordHeadline, whyLine } from "../domain/record-words.js";
import type { RecordFile } from "../domain/schemas.js";
import { changedOutsideOwns } from "../folder/outside-owns.js";
import { systemClock } from "../infra/clock.js";
import { conversationText } from "./conversation-text.js";
import { type Command, RUN_OPTION } from "./kit.js";
import { leftBehindLines } from "./left-behind.js";
import { dispatchDirOf, refOf } from "./resolve.js";
import { spendLines, spendWords } from "./spend-text.js";

/**
 * `result --json`: record.json as written, every attempt of its chain (one for a plain dispatch), and the
 * changed files its patch leaves out, outside its --owns (empty without --owns; null when unknown).
 */
export type ResultData = RecordFile & { attempts: AttemptSummary[]; changedOutsideOwns: string[] | null };

/** `result --conversation --json`: every turn of the dispatch's conversation, first to last. */
export type ConversationData = { conversation: Turn[] };

export const resultCommand: Command<ResultData | ConversationData> = {
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
  },
  async handler(input) {
    if (input.values.conversation === true) {
      const turns = conversationOf(dispatchDirOf(input, refOf(input, "result")));
      return { data: { conversation: turns }, text: conversationText(turns) };
    }
    const { view, record, attempts, stopped } = await resultOf(dispatchDirOf(input, refOf(input, "result")));
    const text = [
      recordLine(record),
      ...outcomeLines(record),
      ...(attempts.length > 1 ? [`attempts: ${attempts.map(attemptWords).join(" → ")}`] : []),
      ...(stopped === null
        ? []
        : [`chain stopped: ${stopped.stopped}${stopped.message === null ? "" : ` — ${stopped.message}`}`]),
      ...spendLines(record, view.spec),
      ...errorLines(record, systemClock.wallNow().getTime()),
      ...leftBehindLines(record, view.spec, view.admit),
      "",
      record.reply === null ? "(no reply)" : inertText(record.reply),
    ];
    const outside = changedOutsideOwns(record.changedFiles, view.admit?.git?.prefix, view.admit?.owns ?? []);
    return { data: { ...record, attempts, changedOutsideOwns: outside }, text: `${text.join("\n")}\n` };
  },
};

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
  if (options.tail !== false && tail.length > 0)
    lines.push("stderr (last lines):", ...tail.map((l) => `  ${inertText(l)}`));
  return lines;
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
