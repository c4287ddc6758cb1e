import { appendLine } from "../src/infra/atomic.js";

/** events.times gets a line at most this often, and only while output flows. */
export const EVENT_TIMES_INTERVAL_MS = 1000;

/**
 * events.times (specs/dispatch-folder.md): when events.jsonl reached each size, as this supervisor read it
 * — one line `<bytes> <epoch ms>` per checkpoint — so that a reader can date every event line (the time
 * of the first checkpoint at or past its end: late by at most a poll and EVENT_TIMES_INTERVAL_MS). The
 * streams of the CLIs carry no time of their own. Best effort: a full disk loses checkpoints, never
 * supervision.
 */
export class EventTimes {
  private offset = 0;
  private pending: { offset: number; wallMs: number } | null = null;
  private writtenAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly file: string) {}

  /** `bytes` more of events.jsonl were read, at `wallMs`; `now` is the monotonic clock. */
  note(bytes: number, wallMs: number, now: number): void {
    if (bytes > 0) {
      this.offset += bytes;
      this.pending = { offset: this.offset, wallMs: Math.round(wallMs) };
    }
    if (this.pending !== null && now - this.writtenAt >= EVENT_TIMES_INTERVAL_MS) this.flush(now);
  }

  /** The file was replaced or truncated: sizes count from its new beginning. */
  restart(): void {
    this.offset = 0;
  }

  /** Writes the pending checkpoint, if any. */
  flush(now: number): void {
    if (this.pending === null) return;
    appendLine(this.file, `${this.pending.offset} ${this.pending.wallMs}`);
    this.pending = null;
    this.writtenAt = now;
  }
}
