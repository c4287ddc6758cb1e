import type { LineFacts } from "../src/domain/facts.js";
import { addFacts, emptySummary } from "../src/domain/summary.js";
import type { WatchState } from "../src/domain/watch.js";
import { FILES } from "../src/folder/layout.js";
import { writeFolderJson } from "../src/folder/write.js";
import type { FileWriter } from "./deps.js";

/** activity.json is rewritten at most this often, and only when something changed. */
export const ACTIVITY_INTERVAL_MS = 1000;

/**
 * What the agent is doing now, for `status` and people: its last event as a human line, open tool calls,
 * retries and tokens so far. Readers get it without rereading events.jsonl.
 */
export class ActivityWriter {
  private readonly summary = emptySummary();
  private changed = false;
  private writtenAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly dir: string,
    private readonly files: FileWriter,
  ) {}

  note(facts: LineFacts): void {
    if (facts.describe === undefined && facts.usage === undefined && facts.retry === undefined) {
      if (facts.toolsOpened === undefined && facts.toolsClosed === undefined) return;
    }
    // activity.json shows no reply: folding streamed reply text here would only churn memory.
    const { reply: _reply, ...shown } = facts;
    addFacts(this.summary, shown);
    this.changed = true;
  }

  /** Something the file shows changed besides the lines (the time waited for heavy slots). */
  touch(): void {
    this.changed = true;
  }

  /** When a pending change is due to be written (monotonic ms), or null when nothing is pending. */
  dueAt(): number | null {
    return this.changed ? this.writtenAt + ACTIVITY_INTERVAL_MS : null;
  }

  /** Writes activity.json when changed and due; `toWall` turns monotonic times into ISO timestamps. */
  flush(state: WatchState, now: number, toWall: (mono: number) => string, force = false): void {
    if (!this.changed || (!force && now - this.writtenAt < ACTIVITY_INTERVAL_MS)) return;
    this.changed = false;
    this.writtenAt = now;
    // Advisory: a full disk must not end supervision; the next change tries again.
    try {
      this.write(state, now, toWall);
    } catch {
      this.changed = true;
    }
  }

  private write(state: WatchState, now: number, toWall: (mono: number) => string): void {
    writeFolderJson(
      this.dir,
      FILES.activity,
      {
        at: toWall(now),
        lastEvent: this.summary.lastDescribe,
        lastEventAt: state.lastEventAt === null ? null : toWall(state.lastEventAt),
        openToolCalls: state.openTools.map((t) => ({
          id: t.id,
          label: t.label,
          openedAt: toWall(t.openedAt),
        })),
        retrying: state.consecutiveRetries,
        retries: state.totalRetries,
        tokens: this.summary.tokens,
        thread: state.thread,
        slotWaitMs: Math.round(state.slotWaitedMs),
      },
      this.files,
    );
  }
}
