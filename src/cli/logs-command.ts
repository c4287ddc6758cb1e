import * as fs from "node:fs";
import * as path from "node:path";
import { readDispatch } from "../dispatch/reader.js";
import { CatherdError } from "../domain/errors.js";
import { inertText } from "../domain/inert-text.js";
import { backendOf } from "../folder/backend.js";
import { humanLine } from "../folder/human-line.js";
import { FILES, fileIn } from "../folder/layout.js";
import { readSandboxLog } from "../folder/sandbox-log.js";
import { readSteering } from "../folder/steering-view.js";
import { systemClock } from "../infra/clock.js";
import { readLineBytesFrom, readLinesFrom } from "../infra/lines-from.js";
import { waitUntil } from "../infra/wait-until.js";
import { type Command, type ParsedInput, RUN_OPTION, stringOption } from "./command-io.js";
import { jsonText } from "./json-text.js";
import { byTime, type ConversationLine, conversationLogLines, fenceLogLines } from "./render.js";
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
    const backend = backendOf(view);
    const raw = input.values.raw === true;
    // exec's output is whatever the command prints: its lines as they are (specs/cli.md, logs), made inert
    // for the terminal as every other human line is; --json carries them as read (JSON escapes controls).
    const render = (line: string): string | null => {
      if (raw) return line;
      const human = backend.plainText ? line : humanLine(backend, line);
      return human === null || input.json ? human : inertText(human);
    };
    const follow = input.values.follow === true;
    // --follow --json streams: one JSON object per line as it comes, so that nothing is lost on Ctrl-C.
    const streaming = follow && input.json;
    const collected: string[] = [];
    const emit = (line: string | Buffer, end: number) => {
      // --raw as text: the file's own bytes, newlines included, never decoded (invalid UTF-8 stays so).
      if (typeof line !== "string") process.stdout.write(line);
      else if (streaming) process.stdout.write(`${jsonText({ line, cursor: end })}\n`);
      else if (input.json) collected.push(line);
      else process.stdout.write(`${line}\n`);
    };
    const file = fileIn(dir, FILES.events);
    const recorded = () => fs.existsSync(fileIn(dir, FILES.record));
    // Once recorded the stream is complete: its unterminated last line, if any, is a line too.
    const drain = (from: number, onLine: (line: string | Buffer, end: number) => void) =>
      raw && !input.json
        ? readLineBytesFrom(file, from, onLine, { final: recorded() })
        : readLinesFrom(
            file,
            from,
            (line, end) => {
              const shown = render(line);
              if (shown !== null) onLine(shown, end);
            },
            { final: recorded() },
          );

    // A steerable dispatch's talk (its supervisor makes inbox/ when it starts): lines of their own, placed
    // among the events by time. Not with --raw: those are the file's bytes.
    // A fenced dispatch's refusals (sandbox.log) are placed among them the same way.
    const steered = fs.existsSync(path.join(dir, FILES.inbox));
    const fenced = fs.existsSync(path.join(dir, FILES.sandboxLog));
    const talking = !raw && (steered || fenced);
    const talk = (): ConversationLine[] => {
      const c = steered ? readSteering(dir, view.state) : { messages: [], questions: [] };
      const refused = fenced ? fenceLogLines(readSandboxLog(dir)) : [];
      return byTime([...conversationLogLines(c.messages, c.questions), ...refused]);
    };
    const printed = new Set<string>();
    // The events.times checkpoints: an event line is dated by the first at or past its end.
    const times = talking ? readTimes(fileIn(dir, FILES.eventTimes)) : [];

    // With --tail, only the last n are kept (trimmed in batches: one copy per n lines, not one per line).
    // Merged with the conversation, the events are kept whole first (a conversation line may fall anywhere).
    const first: [string | Buffer, number][] = [];
    const read = drain(since ?? 0, (line, end) => {
      first.push([line, end]);
      if (!talking && tail !== undefined && first.length >= 2 * tail) first.splice(0, first.length - tail);
    });
    // A cursor past the end: events.jsonl was replaced or cut since it was given; reading began at 0.
    const restarted = read.restarted;
    if (restarted && !input.json) {
      process.stderr.write(
        `catherd: --since ${since} is past the end of ${file}, which was replaced or cut since: read from its start\n`,
      );
    }
    if (streaming && restarted) process.stdout.write(`${JSON.stringify({ restarted: true, cursor: 0 })}\n`);
    let cursor = read.next;
    let merged: [string | Buffer, number][] = first;
    if (talking) {
      // With --since, the talk from the last checkpoint at or before the cursor on: nothing after the
      // cursor is missed, and a line of the second before it may come again.
      const from = since === undefined ? Number.NEGATIVE_INFINITY : sinceTime(times, since);
      const all = talk();
      for (const l of all) printed.add(l.key);
      const lines = all.filter((l) => !(l.atMs < from));
      merged = interleave(first, lines, times, restarted ? 0 : (since ?? 0));
    }
    for (const [line, end] of tail === undefined ? merged : merged.slice(-tail)) emit(line, end);
    // New conversation lines, once each, after the events read in the same look.
    const talkMore = () => {
      if (!talking) return;
      for (const l of talk()) {
        if (printed.has(l.key)) continue;
        printed.add(l.key);
        emit(l.text, cursor);
      }
    };
    if (follow) {
      await waitUntil(
        async () => {
          if (recorded()) return true;
          await readDispatch(dir, { promote: false });
          cursor = drain(cursor, emit).next;
          talkMore();
          return undefined;
        },
        { clock: systemClock, deadline: Number.POSITIVE_INFINITY, pollMs: FOLLOW_POLL_MS },
      );
      cursor = drain(cursor, emit).next;
      talkMore();
    }
    if (streaming) {
      process.stdout.write(`${JSON.stringify({ recorded: true, cursor })}\n`);
      return { data: null, text: "", silent: true };
    }
    return { data: input.json ? { lines: collected, cursor, restarted } : null, text: "" };
  },
};

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
function readTimes(file: string): { bytes: number; atMs: number }[] {
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
