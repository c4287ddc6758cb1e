import * as fs from "node:fs";
import * as path from "node:path";
import type { Backend } from "../backends/types.js";
import type { DispatchView } from "../dispatch/read/inspect.js";
import { readDispatch } from "../dispatch/reader.js";
import { CatherdError } from "../domain/errors.js";
import { inertText } from "../domain/text/inert-text.js";
import { backendOf } from "../folder/backend.js";
import { humanLine } from "../folder/human-line.js";
import { FILES, fileIn } from "../folder/layout.js";
import { readSandboxLog } from "../folder/sandbox-log.js";
import { readSteering } from "../folder/steering-view.js";
import { systemClock } from "../infra/clock.js";
import { type LinesFrom, readLineBytesFrom, readLinesFrom } from "../infra/lines-from.js";
import { waitUntil } from "../infra/wait-until.js";
import { type Command, type ParsedInput, RUN_OPTION, stringOption } from "./command-io.js";
import { jsonText } from "./json-text.js";
import { byTime, type ConversationLine, conversationLogLines, sandboxLogLines } from "./render.js";
import { dispatchDirOf, refOf } from "./resolve.js";

const FOLLOW_POLL_MS = 200;

export interface Logs {
  lines: string[];
  /** The cursor given was past the end (events.jsonl replaced or cut): the lines are read from its start. */
  restarted: boolean;
  /** Where these lines end in events.jsonl (a byte offset): `--since <cursor>` continues from here. */
  cursor: number;
}

export const logsCommand: Command<Logs | null> = {
  name: "logs",
  synopsis: "<name|id|dir>",
  positionals: 1,
  summary:
    "The event stream as human lines (the backend's reading of each event; an exec command's own lines as " +
    "they are), or --raw as the CLI wrote it. --tail gives only the last n lines; --since starts after a " +
    "cursor an earlier --json call returned (one past the end — the file was replaced or cut — reads from " +
    "its start, and says so). --follow keeps printing until the dispatch is recorded; with --json it " +
    "prints one JSON object per line as it comes, {line, cursor}, and {recorded: true, cursor} last. " +
    "A steerable dispatch's messages (each state they reach) and questions (asked, answered) are lines too, " +
    "placed among the events by time (not with --raw).",
  json: "{lines: [...], cursor, restarted}",
  options: {
    run: RUN_OPTION,
    tail: { type: "string", value: "<n>", description: "only the last n lines", integer: true },
    since: {
      type: "string",
      value: "<cursor>",
      description: "start after this cursor (the cursor of an earlier call's result)",
      integer: true,
    },
    follow: { type: "boolean", description: "keep printing until the dispatch is recorded" },
    raw: { type: "boolean", description: "the lines as the CLI wrote them, byte for byte" },
  },
  async handler(input) {
    const ref = refOf(input, "logs");
    const tail = wholeNumber(input, "tail", 1);
    const since = wholeNumber(input, "since", 0);
    const dir = dispatchDirOf(input, ref);
    const view = await readDispatch(dir, { promote: false });
    const raw = input.values.raw === true;
    const follow = input.values.follow === true;
    // --follow --json streams: one JSON object per line as it comes, so that nothing is lost on Ctrl-C.
    const streaming = follow && input.json;
    const collected: string[] = [];
    const emit = emitter(input.json, streaming, collected);
    const drain = drainer(dir, raw && !input.json, lineRenderer(backendOf(view), raw, input.json));
    // Not with --raw: those are the file's bytes.
    const talk = raw ? null : talkOf(dir, view);
    const read = firstLines(drain, since ?? 0, talk === null ? tail : undefined);
    if (read.restarted && !input.json) {
      process.stderr.write(
        `catherd: --since ${since} is past the end of ${fileIn(dir, FILES.events)}, which was replaced or cut since: read from its start\n`,
      );
    }
    if (streaming && read.restarted)
      process.stdout.write(`${JSON.stringify({ restarted: true, cursor: 0 })}\n`);
    const printed = new Set<string>();
    const merged = talk === null ? read.lines : withTalk(read, talk, since, printed);
    for (const [line, end] of tail === undefined ? merged : merged.slice(-tail)) emit(line, end);
    // New conversation lines, once each, after the events read in the same look.
    const look = (from: number): number => {
      const next = drain(from, emit).next;
      if (talk !== null) emitNewTalk(talk, printed, emit, next);
      return next;
    };
    const cursor = follow ? await followToRecord(dir, read.next, look) : read.next;
    if (streaming) {
      process.stdout.write(`${JSON.stringify({ recorded: true, cursor })}\n`);
      return { data: null, text: "", silent: true };
    }
    return { data: input.json ? { lines: collected, cursor, restarted: read.restarted } : null, text: "" };
  },
};

/** A line of events.jsonl (text) or its bytes (--raw as text), with the cursor just after it. */
type Emit = (line: string | Buffer, end: number) => void;
/** Hands the lines of events.jsonl from a cursor on to `onLine`. */
type Drain = (from: number, onLine: Emit) => LinesFrom;
/** When the stream reached a size: events.times, `<bytes> <epoch ms>` a line. */
type Times = readonly { bytes: number; atMs: number }[];

/** Where a line goes: stdout as text (or bytes), one JSON object a line when streaming, or `collected` for --json. */
function emitter(json: boolean, streaming: boolean, collected: string[]): Emit {
  return (line, end) => {
    // --raw as text: the file's own bytes, newlines included, never decoded (invalid UTF-8 stays so).
    if (typeof line !== "string") process.stdout.write(line);
    else if (streaming) process.stdout.write(`${jsonText({ line, cursor: end })}\n`);
    else if (json) collected.push(line);
    else process.stdout.write(`${line}\n`);
  };
}

/** A line as shown: as written (--raw), else the backend's human line, made inert for a terminal. */
function lineRenderer(backend: Backend, raw: boolean, json: boolean): (line: string) => string | null {
  // exec's output is whatever the command prints: its lines as they are (specs/cli.md, logs), made inert
  // for the terminal as every other human line is; --json carries them as read (JSON escapes controls).
  return (line) => {
    if (raw) return line;
    const human = backend.plainText ? line : humanLine(backend, line);
    return human === null || json ? human : inertText(human);
  };
}

/** Reads events.jsonl as bytes (`bytes`: --raw as text) or as rendered lines, the ones rendered to null left out. */
function drainer(dir: string, bytes: boolean, render: (line: string) => string | null): Drain {
  const file = fileIn(dir, FILES.events);
  // Once recorded the stream is complete: its unterminated last line, if any, is a line too.
  return (from, onLine) =>
    bytes
      ? readLineBytesFrom(file, from, onLine, { final: recorded(dir) })
      : readLinesFrom(
          file,
          from,
          (line, end) => {
            const shown = render(line);
            if (shown !== null) onLine(shown, end);
          },
          { final: recorded(dir) },
        );
}

function recorded(dir: string): boolean {
  return fs.existsSync(fileIn(dir, FILES.record));
}

/** The lines placed among the events by time, and the checkpoints that date the events. */
interface Talk {
  lines(): ConversationLine[];
  times: Times;
}

/**
 * A steerable dispatch's talk (its supervisor makes inbox/ when it starts) and a sandboxed dispatch's
 * refusals (sandbox.log): lines of their own, placed among the events by time; null when it has neither.
 */
function talkOf(dir: string, view: DispatchView): Talk | null {
  const steered = fs.existsSync(path.join(dir, FILES.inbox));
  const sandboxed = fs.existsSync(path.join(dir, FILES.sandboxLog));
  if (!steered && !sandboxed) return null;
  return {
    lines: () => {
      const c = steered ? readSteering(dir, view.state) : { messages: [], questions: [] };
      const refused = sandboxed ? sandboxLogLines(readSandboxLog(dir)) : [];
      return byTime([...conversationLogLines(c.messages, c.questions), ...refused]);
    },
    // The events.times checkpoints: an event line is dated by the first at or past its end.
    times: readTimes(fileIn(dir, FILES.eventTimes)),
  };
}

/**
 * The events from `since` on; with `tail`, only the last n are kept (trimmed in batches: one copy per n
 * lines, not one per line). Merged with the talk, the events are kept whole (a talk line may fall anywhere).
 */
function firstLines(
  drain: Drain,
  since: number,
  tail: number | undefined,
): LinesFrom & { lines: [string | Buffer, number][] } {
  const lines: [string | Buffer, number][] = [];
  const read = drain(since, (line, end) => {
    lines.push([line, end]);
    if (tail !== undefined && lines.length >= 2 * tail) lines.splice(0, lines.length - tail);
  });
  // A cursor past the end (`restarted`): events.jsonl was replaced or cut since it was given; reading began at 0.
  return { ...read, lines };
}

/**
 * The first events with the talk among them; each talk line's key goes into `printed`. With --since, the
 * talk from the last checkpoint at or before the cursor on: nothing after the cursor is missed, and a
 * line of the second before it may come again.
 */
function withTalk(
  read: LinesFrom & { lines: [string | Buffer, number][] },
  talk: Talk,
  since: number | undefined,
  printed: Set<string>,
): [string | Buffer, number][] {
  const from = since === undefined ? Number.NEGATIVE_INFINITY : sinceTime(talk.times, since);
  const all = talk.lines();
  for (const l of all) printed.add(l.key);
  const lines = all.filter((l) => !(l.atMs < from));
  return interleave(read.lines, lines, talk.times, read.restarted ? 0 : (since ?? 0));
}

/** The talk lines not printed yet, each once, at `cursor`. */
function emitNewTalk(talk: Talk, printed: Set<string>, emit: Emit, cursor: number): void {
  for (const l of talk.lines()) {
    if (printed.has(l.key)) continue;
    printed.add(l.key);
    emit(l.text, cursor);
  }
}

/** --follow: a look every FOLLOW_POLL_MS (the reader's duties done first) until recorded, then a last one. */
async function followToRecord(dir: string, from: number, look: (cursor: number) => number): Promise<number> {
  let cursor = from;
  await waitUntil(
    async () => {
      if (recorded(dir)) return true;
      await readDispatch(dir, { promote: false });
      cursor = look(cursor);
      return undefined;
    },
    { clock: systemClock, deadline: Number.POSITIVE_INFINITY, pollMs: FOLLOW_POLL_MS },
  );
  return look(cursor);
}

/** A flag that holds a whole number of at least `min`, or undefined when it is not given. */
function wholeNumber(input: ParsedInput, flag: string, min: number): number | undefined {
  const text = stringOption(input, flag);
  if (text === undefined) return undefined;
  const value = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min)) {
    throw new CatherdError("E_INPUT_INVALID", `--${flag} ${JSON.stringify(text)} is not a whole number`, {
      fix: `give --${flag} as a whole number from ${min}`,
    });
  }
  return value;
}

/** events.times: `<bytes> <epoch ms>` a line, sizes growing (a size that shrinks starts over). */
function readTimes(file: string): Times {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return [];
  }
  let times: { bytes: number; atMs: number }[] = [];
  for (const part of text.split("\n")) {
    const [bytes, atMs] = part.split(" ").map(Number);
    if (bytes === undefined || atMs === undefined || !Number.isFinite(bytes) || !Number.isFinite(atMs))
      continue;
    const last = times.at(-1);
    if (last !== undefined && bytes < last.bytes) times = [];
    times.push({ bytes, atMs });
  }
  return times;
}

/** When the stream reached `end`: the first checkpoint at or past it; +Infinity when none is yet. */
function timeOf(times: readonly { bytes: number; atMs: number }[], end: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((times[mid] as { bytes: number }).bytes >= end) hi = mid;
    else lo = mid + 1;
  }
  return times[lo]?.atMs ?? Number.POSITIVE_INFINITY;
}

/** The last checkpoint at or before `cursor`: the stream had not passed the cursor before then. */
function sinceTime(times: readonly { bytes: number; atMs: number }[], cursor: number): number {
  let at = Number.NEGATIVE_INFINITY;
  for (const t of times) if (t.bytes <= cursor) at = t.atMs;
  return at;
}

/**
 * The event lines and the conversation's in one list by time: a conversation line goes before the first
 * event line dated after it (an event line is dated by the checkpoint that first saw it, late by at most a
 * second); a conversation line carries the cursor of the event line before it (`end`).
 */
export function interleave<L>(
  events: readonly [L, number][],
  talk: readonly ConversationLine[],
  times: readonly { bytes: number; atMs: number }[],
  start: number,
): [L | string, number][] {
  const out: [L | string, number][] = [];
  let t = 0;
  let cursor = events[0] === undefined ? start : Number.NaN;
  for (const [line, end] of events) {
    const at = timeOf(times, end);
    while (t < talk.length && (talk[t] as ConversationLine).atMs < at) {
      out.push([(talk[t] as ConversationLine).text, Number.isNaN(cursor) ? start : cursor]);
      t++;
    }
    out.push([line, end]);
    cursor = end;
  }
  for (; t < talk.length; t++)
    out.push([(talk[t] as ConversationLine).text, Number.isNaN(cursor) ? start : cursor]);
  return out;
}
