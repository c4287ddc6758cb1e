import { foldWindows, type QuotaWindow } from "../spend/quota.js";
import { addUsage, emptyTally, type UsageTally } from "../spend/usage.js";
import type { ErrorKind } from "../vocab.js";
import type { FinalFact, LineFacts } from "../watch/facts.js";
import type { ErrorFact, RetryAfter, RetryFact } from "./failure.js";

/** Everything the record needs from a whole event stream, folded line by line in bounded memory. */
export interface StreamSummary {
  thread: string | null;
  /** Every usage report folded (usage.ts); `usageIgnored` counts the reports that did not add up. */
  usage: UsageTally;
  usageIgnored: number;
  reply: string | null;
  /** The terminal event that still stands (a CLI that goes on after it clears it). */
  final: FinalFact | null;
  /** The failure the terminal event reported, when it was an error. */
  finalError: ErrorFact | null;
  /** The last failure reported, whatever it proves. */
  lastError: ErrorFact | null;
  /** The last failure that proves a kind. */
  lastKnownError: ErrorFact | null;
  /** The provider's own words for each kind seen, the latest of each: the most specific message. */
  providerWords: Partial<Record<ErrorKind, string>>;
  lastRetry: RetryFact | null;
  /** A provider retry came after the last progress line: the CLI was last seen waiting on its provider. */
  retryPending: boolean;
  /** The last time to come back that was said; one placed in time wins over a bare delay. */
  retryAfter: RetryAfter | null;
  retries: number;
  /** The provider's windows as last reported (quota.ts, at most MAX_WINDOWS): a spent one says when to come back. */
  quota: QuotaWindow[];
  lines: number;
  lastDescribe: string | null;
  /**
   * Lines of the event stream dropped as over catherd's line limit since the last reply text was taken:
   * the final message may have been in one of them.
   */
  droppedSinceReply: number;
}

export function emptySummary(): StreamSummary {
  return {
    thread: null,
    usage: emptyTally(),
    usageIgnored: 0,
    reply: null,
    final: null,
    finalError: null,
    lastError: null,
    lastKnownError: null,
    providerWords: {},
    lastRetry: null,
    retryPending: false,
    retryAfter: null,
    retries: 0,
    quota: [],
    lines: 0,
    lastDescribe: null,
    droppedSinceReply: 0,
  };
}

/** The longest reply kept in memory and in record.json; the rest is cut with a marker. */
export const MAX_REPLY_CHARS = 1_000_000;

function capReply(text: string): string {
  return text.length > MAX_REPLY_CHARS ? `${text.slice(0, MAX_REPLY_CHARS)}\n[reply cut by catherd]` : text;
}

/** The reply after one line's answer text (see LineFacts.reply for the modes). */
function nextReply(reply: string | null, text: string, mode: NonNullable<LineFacts["reply"]>["mode"]) {
  switch (mode) {
    case "replace":
      return capReply(text);
    case "result":
      return text !== "" && reply?.endsWith(text) ? reply : capReply(text);
    case "append":
    case "message": {
      // A reply already cut stays as it is: appending to it would copy a megabyte per line for nothing.
      if ((reply?.length ?? 0) > MAX_REPLY_CHARS) return reply;
      const gap = mode === "message" && reply !== null && reply !== "" && text !== "" ? "\n\n" : "";
      return capReply((reply ?? "") + gap + text);
    }
  }
}

function isPlaced(retryAfter: RetryAfter): boolean {
  return "atMs" in retryAfter || retryAfter.fromMs !== null;
}

function addError(summary: StreamSummary, error: ErrorFact): void {
  summary.lastError = error;
  if (error.kind !== null) {
    summary.lastKnownError = error;
    if (error.words === "provider") summary.providerWords[error.kind] = error.message;
  }
  const said = error.retryAfter;
  if (said !== null && (isPlaced(said) || summary.retryAfter === null || !isPlaced(summary.retryAfter))) {
    summary.retryAfter = said;
  }
}

/**
 * Folds one line's facts into the summary (mutates it: this runs once per line). Returns why the line's
 * usage was ignored, or null: the caller may log it.
 */
export function addFacts(summary: StreamSummary, facts: LineFacts): string | null {
  summary.lines += 1;
  if (facts.thread !== undefined) summary.thread = facts.thread;
  let ignored = facts.usageIgnored ?? null;
  if (facts.usage !== undefined) ignored = addUsage(summary.usage, facts.usage);
  if (ignored !== null) summary.usageIgnored += 1;
  if (facts.reply !== undefined) {
    summary.reply = nextReply(summary.reply, facts.reply.text, facts.reply.mode);
    summary.droppedSinceReply = 0;
  }
  if (facts.error !== undefined) addError(summary, facts.error);
  if (facts.quota !== undefined) summary.quota = foldWindows(summary.quota, facts.quota);
  if (facts.continues === true) {
    summary.final = null;
    summary.finalError = null;
  }
  if (facts.final !== undefined) {
    summary.final = facts.final;
    summary.finalError = facts.final.isError ? (facts.error ?? null) : null;
  }
  if (facts.retry !== undefined) {
    summary.retries += 1;
    summary.lastRetry = facts.retry;
    summary.retryPending = true;
  } else if (facts.progress) {
    summary.retryPending = false;
  }
  if (facts.describe !== undefined) summary.lastDescribe = facts.describe;
  return ignored;
}

/** Counts lines of the event stream its reader dropped as over the line limit (mutates the summary). */
export function addDropped(summary: StreamSummary, lines: number): void {
  summary.droppedSinceReply += lines;
}
