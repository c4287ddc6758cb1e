import * as fs from "node:fs";
import type { Backend } from "../../backends/types.js";
import { addFacts, emptySummary } from "../../domain/ending/summary.js";
import { accounts, billedTokens, costOf, totalOf } from "../../domain/spend/usage.js";
import type { LineFacts } from "../../domain/watch/facts.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { readLinesFrom } from "../../infra/lines-from.js";
import type { EventLineWire, ToolCallWire, UsagePointWire } from "../wire.js";
import { humanLineOf } from "./dispatch-reads.js";

// A dispatch's event stream as its page shows it: the human lines (logs' own), each dated by events.times,
// the tool calls with when they opened and closed, and the usage as it grew. Read incrementally: each
// look reads only the bytes added since the last, so a page open on a dispatch that runs for hours costs
// what its new output costs.

/** The most lines, tool calls and usage points kept (older ones are counted, not kept). */
const MAX_LINES = 1000;
const MAX_TOOLS = 500;
const MAX_POINTS = 2000;
/** A line shown is cut to this many characters: a 10 MB line must not become a 10 MB page. */
export const MAX_LINE_CHARS = 2000;

export function cutLine(text: string, max = MAX_LINE_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)} … (${text.length - max} more characters)`;
}

export class StreamDigest {
  private offset = 0;
  private timesOffset = 0;
  private times: { bytes: number; atMs: number }[] = [];
  private carryTimes = "";
  readonly lines: (EventLineWire & { end: number })[] = [];
  linesOmitted = 0;
  private readonly tools = new Map<string, ToolCallWire & { end: number }>();
  toolsOmitted = 0;
  readonly usage: UsagePointWire[] = [];
  private readonly summary = emptySummary();
  /** Lines (and tools) not yet dated: past the last checkpoint when read. */
  private undated: { end: number; set: (atMs: number) => void }[] = [];

  constructor(
    private readonly dir: string,
    private readonly backend: Backend,
  ) {}

  /** Reads what was added since the last call; `final` once the dispatch is recorded. */
  update(final: boolean): void {
    this.readTimes();
    const file = fileIn(this.dir, FILES.events);
    let end = this.offset;
    const read = readLinesFrom(
      file,
      this.offset,
      (line) => {
        end += Buffer.byteLength(line) + 1;
        this.take(line, end);
      },
      { final },
    );
    if (read.restarted) this.offset = 0;
    this.offset = read.next;
    this.dateLines();
  }

  private take(line: string, end: number): void {
    let facts: LineFacts;
    try {
      facts = this.backend.parse(line);
    } catch {
      facts = { progress: true };
    }
    const shown = humanLineOf(this.backend, line);
    const atMs = this.timeOf(end);
    if (shown !== null) {
      const entry = {
        text: cutLine(shown),
        atMs,
        mark:
          facts.retry !== undefined
            ? ("retry" as const)
            : facts.error !== undefined
              ? ("error" as const)
              : null,
        end,
      };
      this.lines.push(entry);
      if (atMs === null) this.undated.push({ end, set: (t) => (entry.atMs = t) });
      if (this.lines.length > MAX_LINES) {
        this.lines.shift();
        this.linesOmitted += 1;
      }
    }
    for (const open of facts.toolsOpened ?? []) {
      const call: ToolCallWire & { end: number } = {
        label: cutLine(open.label, 400),
        openedAtMs: atMs,
        closed: false,
        closedAtMs: null,
        end,
      };
      this.tools.set(open.id, call);
      if (atMs === null) this.undated.push({ end, set: (t) => (call.openedAtMs = t) });
      if (this.tools.size > MAX_TOOLS) {
        const oldest = this.tools.keys().next().value as string;
        this.tools.delete(oldest);
        this.toolsOmitted += 1;
      }
    }
    for (const id of facts.toolsClosed ?? []) {
      const call = this.tools.get(id);
      if (call === undefined || call.closed) continue;
      call.closed = true;
      call.closedAtMs = atMs;
      if (atMs === null) this.undated.push({ end, set: (t) => (call.closedAtMs = t) });
    }
    if (facts.usage !== undefined) {
      addFacts(this.summary, { progress: false, usage: facts.usage });
      const used = accounts(this.summary.usage);
      const point: UsagePointWire = {
        atMs,
        tokens: billedTokens(totalOf(used)),
        // The CLI's own dollars where they cover every token so far: the page prices nothing itself.
        costUsd: costOf(used, () => null).usd,
      };
      this.usage.push(point);
      if (atMs === null) this.undated.push({ end, set: (t) => (point.atMs = t) });
      if (this.usage.length > MAX_POINTS) this.usage.splice(0, this.usage.length - MAX_POINTS);
    }
  }

  /** When the stream reached `end`: the first checkpoint at or past it, or null when none is yet. */
  private timeOf(end: number): number | null {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.times[mid] as { bytes: number }).bytes >= end) hi = mid;
      else lo = mid + 1;
    }
    return this.times[lo]?.atMs ?? null;
  }

  private dateLines(): void {
    if (this.undated.length === 0) return;
    const still: typeof this.undated = [];
    for (const u of this.undated) {
      const at = this.timeOf(u.end);
      if (at === null) still.push(u);
      else u.set(at);
    }
    this.undated = still;
  }

  /** New checkpoints of events.times (`<bytes> <epoch ms>` lines). A size that shrinks starts over. */
  private readTimes(): void {
    const file = fileIn(this.dir, FILES.eventTimes);
    let text: string;
    try {
      const fd = fs.openSync(file, "r");
      try {
        const size = fs.fstatSync(fd).size;
        if (size < this.timesOffset) this.timesOffset = 0;
        const buffer = Buffer.alloc(size - this.timesOffset);
        fs.readSync(fd, buffer, 0, buffer.length, this.timesOffset);
        this.timesOffset = size;
        text = this.carryTimes + buffer.toString("utf8");
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      return;
    }
    const parts = text.split("\n");
    this.carryTimes = parts.pop() ?? "";
    for (const part of parts) {
      const [bytes, atMs] = part.split(" ").map(Number);
      if (!Number.isFinite(bytes) || !Number.isFinite(atMs)) continue;
      const last = this.times.at(-1);
      if (last !== undefined && (bytes as number) < last.bytes) this.times = [];
      this.times.push({ bytes: bytes as number, atMs: atMs as number });
    }
  }

  toolCalls(): ToolCallWire[] {
    return [...this.tools.values()].map(({ end: _end, ...call }) => call);
  }
}
