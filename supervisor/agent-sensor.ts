import type { Backend } from "../src/backends/types.js";
import { type LineFacts, PROGRESS } from "../src/domain/watch/facts.js";
import { FILES, fileIn } from "../src/folder/layout.js";
import { LineReader, type ReadResult } from "../src/infra/line-reader.js";
import type { RunningChild } from "./child.js";
import { EventTimes } from "./event-times.js";
import type { SupervisorLog } from "./log.js";
import { NOTHING, type Sensor, type Sight } from "./sensor.js";

/**
 * Lines are read and judged in bites of this much input: small enough that a bite's lines die young, so
 * that the heap does not grow with the stream (figures: specs/performance.md, "Figures behind constants").
 */
export const POLL_BUDGET_BYTES = 1024 * 1024;

/** One stream of the agent's: its file, its reader, what its lines say. */
interface Stream {
  file: string;
  reader: LineReader;
  parse: (line: string) => LineFacts;
}

export interface AgentSensorInput {
  dir: string;
  backend: Backend;
  child: RunningChild;
  log: SupervisorLog;
  /** Takes each line's facts as they are read, dated `at` (monotonic): the watch core and its company. */
  fold: (file: string, facts: LineFacts, at: number) => void;
  /** The date of the first read (an adopted dispatch's backlog, written unwatched); null: when read. */
  backlogAt: number | null;
  /** A monotonic time as ms since the epoch, for events.times. */
  wallOf: (mono: number) => number;
}

const EXITED: Sight = Object.freeze({
  saw: Object.freeze({ exited: true }),
  nextLookAt: Number.POSITIVE_INFINITY,
});

/**
 * The agent: whether it exited, and its new lines of events.jsonl and stderr.log, each folded as it is
 * read. The exit is looked at before reading, so every line written before it is read in the same poll,
 * an unterminated last one included. Needs no look of its own: output wakes the loop (news.ts), and so
 * does the exit. `bytes` is what the last look read.
 */
export class AgentSensor implements Sensor {
  bytes = 0;
  private readonly events: Stream;
  private readonly stderr: Stream;
  private readonly eventTimes: EventTimes;
  private backlogAt: number | null;

  constructor(private readonly input: AgentSensorInput) {
    const { dir, backend } = input;
    this.events = {
      file: FILES.events,
      reader: new LineReader(fileIn(dir, FILES.events)),
      parse: (line) => backend.parse(line),
    };
    this.stderr = {
      file: FILES.stderr,
      reader: new LineReader(fileIn(dir, FILES.stderr)),
      parse: backend.parseStderr ?? (() => PROGRESS),
    };
    this.eventTimes = new EventTimes(fileIn(dir, FILES.eventTimes));
    this.backlogAt = input.backlogAt;
  }

  look(now: number): Sight {
    const exited = this.input.child.exit !== null;
    const readAt = this.backlogAt ?? now;
    this.backlogAt = null;
    const eventBytes = this.ingest(this.events, exited, readAt);
    this.eventTimes.note(eventBytes, this.input.wallOf(readAt), now);
    this.bytes = eventBytes + this.ingest(this.stderr, exited, readAt);
    return exited ? EXITED : NOTHING;
  }

  /** Writes events.times' last checkpoint and lets go of the files. */
  close(now: number): void {
    this.eventTimes.flush(now);
    this.events.reader.close();
    this.stderr.reader.close();
  }

  /** Reads what `stream` gained, in bounded bites: a burst of output never sits in memory whole. */
  private ingest(stream: Stream, final: boolean, at: number): number {
    let bytes = 0;
    for (let more = true; more; ) {
      const read = stream.reader.read(POLL_BUDGET_BYTES);
      bytes += read.bytes;
      more = read.bytes >= POLL_BUDGET_BYTES;
      this.handle(stream, read, at);
    }
    if (final) this.handle(stream, stream.reader.flush(), at);
    return bytes;
  }

  private handle(stream: Stream, read: ReadResult, at: number): void {
    const { file, parse } = stream;
    if (read.dropped > 0) this.input.log("line-dropped", { file, count: read.dropped });
    if (read.restarted) this.input.log("file-restarted", { file });
    if (read.restarted && file === FILES.events) this.eventTimes.restart();
    for (const line of read.lines) this.input.fold(file, safeParse(parse, line), at);
  }
}

/** A backend that throws on a line must not end supervision: the line counts as progress. */
function safeParse(parse: (line: string) => LineFacts, line: string): LineFacts {
  try {
    return parse(line);
  } catch {
    return PROGRESS;
  }
}
