import type { FinalFact, LineFacts, Tokens } from "./facts.js";

/** Everything the record needs from a whole event stream, folded line by line in bounded memory. */
export interface StreamSummary {
  thread: string | null;
  tokens: Tokens;
  costUsd: number | null;
  reply: string | null;
  final: FinalFact | null;
  limitSeen: boolean;
  lastError: string | null;
  retries: number;
  lines: number;
  lastDescribe: string | null;
}

export function emptySummary(): StreamSummary {
  return {
    thread: null,
    tokens: { input: 0, cached: 0, output: 0 },
    costUsd: null,
    reply: null,
    final: null,
    limitSeen: false,
    lastError: null,
    retries: 0,
    lines: 0,
    lastDescribe: null,
  };
}

/** The longest reply kept in memory and in record.json; the rest is cut with a marker. */
export const MAX_REPLY_CHARS = 1_000_000;

function capReply(text: string): string {
  return text.length > MAX_REPLY_CHARS ? `${text.slice(0, MAX_REPLY_CHARS)}\n[reply cut by catherd]` : text;
}

/** Folds one line's facts into the summary (mutates and returns it: this runs once per line). */
export function addFacts(summary: StreamSummary, facts: LineFacts): StreamSummary {
  summary.lines += 1;
  if (facts.thread !== undefined) summary.thread = facts.thread;
  if (facts.usage !== undefined) {
    summary.tokens.input += facts.usage.input;
    summary.tokens.cached += facts.usage.cached;
    summary.tokens.output += facts.usage.output;
  }
  if (facts.costUsd !== undefined) summary.costUsd = (summary.costUsd ?? 0) + facts.costUsd;
  if (facts.reply !== undefined) {
    if (facts.reply.mode === "replace") summary.reply = capReply(facts.reply.text);
    // A reply already cut stays as it is: appending to it would copy a megabyte per line for nothing.
    else if ((summary.reply?.length ?? 0) <= MAX_REPLY_CHARS)
      summary.reply = capReply((summary.reply ?? "") + facts.reply.text);
  }
  if (facts.final !== undefined) summary.final = facts.final;
  if (facts.limit === true) summary.limitSeen = true;
  if (facts.error !== undefined) summary.lastError = facts.error;
  if (facts.retry !== undefined) summary.retries += 1;
  if (facts.describe !== undefined) summary.lastDescribe = facts.describe;
  return summary;
}
