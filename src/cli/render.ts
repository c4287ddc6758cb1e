import { comeBackAt } from "../domain/ending/record-words.js";
import { unansweredWords } from "../domain/steering/question-words.js";
import { formatDuration } from "../domain/text/duration.js";
import { cutChars, inertText } from "../domain/text/inert-text.js";
import type { SandboxLine } from "../folder/sandbox-log.js";
import type { MessageView, QuestionView } from "../folder/steering-view.js";

// Human output: fits 80 columns — a terminal's own width where a table can use it — and colours only for
// a terminal without NO_COLOR.

export const WIDTH = 80;

/** How wide a table may be: the terminal's width when stdout is one (at least 60), else WIDTH. */
export function tableWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  return stream.isTTY === true && stream.columns !== undefined ? Math.max(60, stream.columns) : WIDTH;
}

const STYLES = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
} as const;
export type Style = keyof typeof STYLES;

export function colorEnabled(stream: { isTTY?: boolean } = process.stdout): boolean {
  return stream.isTTY === true && (process.env.NO_COLOR ?? "") === "" && process.env.TERM !== "dumb";
}

export function paint(text: string, style: Style, enabled = colorEnabled()): string {
  if (!enabled) return text;
  const [open, close] = STYLES[style];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

/**
 * Text for a table's cell: made inert for a terminal (an agent's words reach every column that says what
 * it is doing), its white space folded, then cut to `width` characters with an ellipsis — after the
 * escapes are gone, so no sequence is ever cut in half — and padded to exactly that width.
 */
export function cell(text: string, width: number): string {
  const flat = inertText(text).replace(/\s+/g, " ");
  if (flat.length > width) return `${cutChars(flat, Math.max(0, width - 1))}…`;
  return flat.padEnd(width);
}

/** "3m12s" since an ISO time, or "-". */
export function age(iso: string | null, nowMs: number): string {
  if (iso === null) return "-";
  const at = Date.parse(iso);
  return Number.isFinite(at) ? formatDuration(Math.max(0, nowMs - at)) : "-";
}

/** 20263 → "20.3k". */
export function count(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * Why, for the narrow result column of `status`: "rate-limit until 14:05" (the day, "Dec 1", when it is
 * further than a day), else "auth: invalid x-api-key".
 */
export function shortWhy(
  error: { kind?: string | null | undefined; message: string; retryAfter?: string | null | undefined },
  nowMs: number,
): string {
  if (error.kind == null) return error.message;
  const at = error.retryAfter == null ? Number.NaN : Date.parse(error.retryAfter);
  if (Number.isNaN(at)) return `${error.kind}: ${error.message}`;
  const date = new Date(at);
  const when =
    Math.abs(at - nowMs) < 24 * 3_600_000
      ? comeBackAt(error.retryAfter ?? "", nowMs)
      : `${MONTHS[date.getMonth()]} ${date.getDate()}`;
  return `${error.kind} until ${when}`;
}

/** 1536 → "1.5 KiB"; bytes below 1 KiB as they are. */
export function bytes(n: number): string {
  const units = ["KiB", "MiB", "GiB", "TiB"];
  if (n < 1024) return `${n} B`;
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

// A steerable dispatch's conversation (specs/steering.md), as status, show, logs and the dashboard say it.
// Pure: each takes readSteering's views (src/folder/steering-view.ts). Every text an agent or a person
// wrote is made inert here, before it is cut.

/** The parts of a question these lines use. */
export type AskedQuestion = Omit<QuestionView, "delivered">;

/** The parts of a message these lines use. */
export type SentMessage = MessageView;

/** What status's last column says of a dispatch waiting for an answer: "asks: q1 run: npm test". */
export function askingText(q: Pick<AskedQuestion, "id" | "asks">, more = 0): string {
  return `asks: ${q.id} ${inertText(q.asks).replace(/\s+/g, " ")}${more > 0 ? ` (+${more} more)` : ""}`;
}

/** "14:05:07" of an ISO time (UTC, as the files write it), or the ISO text when it is not one. */
function clockOf(iso: string | null): string {
  if (iso === null) return "?";
  return /^\d{4}-\d\d-\d\dT(\d\d:\d\d:\d\d)/.exec(iso)?.[1] ?? iso;
}

/** The last six characters of a message id: what a person tells messages apart by. */
export function messageTag(id: string): string {
  return id.length > 6 ? `…${id.slice(-6)}` : id;
}

/** How a question was answered: "allowed", "denied", "answered \"yes\"", with why. */
export function responseWords(a: NonNullable<AskedQuestion["answer"]>): string {
  const what =
    a.text !== null ? `answered ${JSON.stringify(inertText(a.text))}` : a.allow ? "allowed" : "denied";
  return `${what}${a.why === null ? "" : ` (${inertText(a.why)})`}`;
}

/**
 * show's lines for the conversation: a message a line ("…k3x9qa acted 10:15:02 also update the docs",
 * "…k3x9qa failed 10:16:00 the dispatch was cancelled: one more thing") and a question a line
 * ("q1 permission: run: npm test — allowed by catherd answer (pid 12) at 10:15:30", "q2 question: which
 * port? — waiting for an answer until 2026-12-01T10:20:00.000Z").
 */
export function conversationShowLines(
  messages: readonly SentMessage[],
  questions: readonly AskedQuestion[],
  queuedWhy: string | null = null,
): string[] {
  const lines: string[] = [];
  if (messages.length > 0) lines.push(`messages (${messages.length}):`);
  for (const m of messages) {
    const failed = m.state === "failed" && m.why !== null ? ` (${inertText(m.why)})` : "";
    const why = m.state === "queued" && queuedWhy !== null ? ` (${queuedWhy})` : failed;
    const head = m.head === "" ? "(not a message)" : inertText(m.head);
    lines.push(
      `  ${messageTag(m.id)} ${m.state}${m.interrupt ? " (interrupt)" : ""} ${m.at ?? "?"}${why}: ${cutChars(head, 60)}`,
    );
  }
  if (questions.length > 0) lines.push(`questions (${questions.length}):`);
  for (const q of questions) {
    const answer =
      q.answer !== null
        ? `${responseWords(q.answer)} by ${inertText(q.answer.by)} at ${q.answer.at}`
        : unansweredWords(q);
    lines.push(`  ${q.id} ${q.kind}: ${cutChars(inertText(q.asks), 60)} — ${answer}`);
  }
  return lines;
}

/** One dated line of the conversation, as `logs` prints it among the event lines. */
export interface ConversationLine {
  /** When it happened (epoch ms; NaN sorts last). */
  atMs: number;
  /** Stable across reads: `logs --follow` prints each once. */
  key: string;
  text: string;
}

/**
 * logs' lines: one per state a message reached ("» message …k3x9qa queued 10:15:00: also update the docs",
 * "» message …k3x9qa delivered 10:15:01", "! » message …k3x9qa failed 10:16:00: the dispatch was
 * cancelled") and per question asked and answered ("? q1 asks 10:15:20 (permission): run: npm test;
 * answer by 10:16:20", "? q1 allowed 10:15:30 by catherd answer (pid 12)"), in time order.
 */
export function conversationLogLines(
  messages: readonly SentMessage[],
  questions: readonly AskedQuestion[],
): ConversationLine[] {
  const lines: ConversationLine[] = [];
  const ms = (iso: string | null) => (iso === null ? Number.NaN : Date.parse(iso));
  for (const m of messages) {
    const head = m.head === "" ? "(not a message)" : cutChars(inertText(m.head).replace(/\s+/g, " "), 80);
    const history = m.history.length > 0 ? m.history : [{ state: m.state, at: m.sentAt ?? "", why: null }];
    history.forEach((h, i) => {
      const failed = h.state === "failed";
      const tail = i === 0 ? `: ${head}` : failed && h.why !== null ? `: ${inertText(h.why)}` : "";
      lines.push({
        atMs: ms(h.at === "" ? null : h.at),
        key: `m ${m.id} ${i}`,
        text: `${failed ? "! " : ""}» message ${messageTag(m.id)} ${h.state}${i === 0 && m.interrupt ? " (interrupt)" : ""} ${clockOf(h.at === "" ? null : h.at)}${tail}`,
      });
    });
  }
  for (const q of questions) {
    const asks = cutChars(inertText(q.asks).replace(/\s+/g, " "), 120);
    lines.push({
      atMs: ms(q.askedAt),
      key: `q ${q.id} asked`,
      text: `? ${q.id} asks ${clockOf(q.askedAt)} (${q.kind}): ${asks}; answer by ${clockOf(q.answerBy)}`,
    });
    if (q.answer !== null) {
      lines.push({
        atMs: ms(q.answer.at),
        key: `q ${q.id} answered`,
        text: `? ${q.id} ${responseWords(q.answer)} ${clockOf(q.answer.at)} by ${inertText(q.answer.by)}`,
      });
    }
  }
  // Stable: lines of one time keep the order above (a message's states, a question then its answer).
  return lines
    .map((l, i) => ({ l, i }))
    .sort((a, b) => order(a.l.atMs, b.l.atMs) || a.i - b.i)
    .map(({ l }) => l);
}

/**
 * sandbox.log's refusals as `logs` lines (specs/sandbox.md, "What it refused"): `! sandbox refused
 * 127.0.0.1:4000 (GET) 10:15:02: not on the allow list`.
 */
export function sandboxLogLines(lines: readonly SandboxLine[]): ConversationLine[] {
  return lines.flatMap((line, i) =>
    line.event !== "denied"
      ? []
      : [
          {
            atMs: Date.parse(line.at),
            key: `f ${i}`,
            text: `! sandbox refused ${inertText(String(line.host ?? "?"))}:${line.port ?? "?"} (${inertText(String(line.method ?? "?"))}) ${clockOf(line.at)}: ${inertText(String(line.why ?? ""))}`,
          },
        ],
  );
}

/** Lines of several sources in one list by time (a stable merge: one source's order is kept). */
export function byTime(lines: readonly ConversationLine[]): ConversationLine[] {
  return lines
    .map((l, i) => ({ l, i }))
    .sort((a, b) => order(a.l.atMs, b.l.atMs) || a.i - b.i)
    .map(({ l }) => l);
}

function order(a: number, b: number): number {
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1;
  if (Number.isNaN(b)) return -1;
  return a - b;
}

/** record.json's `steering` (specs/record.md), as far as these lines read it. */
export interface SteeringCounts {
  messages: { queued: number; delivered: number; acted: number; failed: number };
  questions: { asked: number; answered: number; byPolicy: number; unanswered: number };
  keptOpenMs: number | null;
}

/**
 * A record's steering counts in a line: "steering: 2 messages (2 acted), 1 question (1 answered, 0 by
 * policy), kept open 30s".
 */
export function steeringLine(s: SteeringCounts): string {
  const m = s.messages;
  const total = m.queued + m.delivered + m.acted + m.failed;
  const states = (["acted", "delivered", "queued", "failed"] as const)
    .filter((k) => m[k] > 0)
    .map((k) => `${m[k]} ${k}`);
  const q = s.questions;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const asked =
    q.asked === 0
      ? "no questions"
      : `${plural(q.asked, "question")} (${q.answered} answered, ${q.byPolicy} by policy${q.unanswered > 0 ? `, ${q.unanswered} unanswered` : ""})`;
  const kept =
    s.keptOpenMs === null || s.keptOpenMs === 0 ? "" : `, kept open ${formatDuration(s.keptOpenMs)}`;
  return `steering: ${plural(total, "message")}${states.length > 0 ? ` (${states.join(", ")})` : ""}, ${asked}${kept}`;
}
