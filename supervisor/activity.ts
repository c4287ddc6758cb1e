import { addFacts, emptySummary } from "../src/domain/ending/summary.js";
import { accounts, type ModelAccount } from "../src/domain/spend/usage.js";
import type { LineFacts } from "../src/domain/watch/facts.js";
import type { WatchState } from "../src/domain/watch/watch.js";
import { FILES } from "../src/folder/layout.js";
import { type PricedUsage, pricedUsage } from "../src/folder/spend.js";
import { writeFolderJson } from "../src/folder/write.js";
import type { FileWriter } from "./deps.js";

function ownFigures(list: readonly ModelAccount[], at: Date): PricedUsage {
  return pricedUsage(list, { provider: null, model: null }, null, at);
}

/** activity.json is rewritten at most this often, and only when something changed. */
export const ACTIVITY_INTERVAL_MS = 1000;

/**
 * What the agent is doing now, for `status` and people: its last event as a human line, open tool calls,
 * retries, and usage and cost so far. Readers get it without rereading events.jsonl.
 */
export class ActivityWriter {
  private readonly summary = emptySummary();
  private changed = false;
  private writtenAt = Number.NEGATIVE_INFINITY;
  /** Counts the usage reports folded: the spend is worked out again only when it moves. */
  usageReports = 0;

  constructor(
    private readonly dir: string,
    private readonly files: FileWriter,
    /** Usage and cost as known now, for activity.json; by default the CLI's own dollars only. */
    private readonly price: (accounts: readonly ModelAccount[], at: Date) => PricedUsage = ownFigures,
    /** Told of a write the disk refused: a full disk ends the dispatch (disk-watch.ts). */
    private readonly refused: (error: unknown) => void = () => {},
  ) {}

  /** Folds one line's facts; returns why its usage was ignored, or null. */
  note(facts: LineFacts): string | null {
    if (facts.describe === undefined && facts.usage === undefined && facts.retry === undefined) {
      if (facts.toolsOpened === undefined && facts.toolsClosed === undefined) {
        if (facts.usageIgnored === undefined) return null;
      }
    }
    // activity.json shows no reply: folding streamed reply text here would only churn memory.
    const { reply: _reply, ...shown } = facts;
    const ignored = addFacts(this.summary, shown);
    if (facts.usage !== undefined && ignored === null) this.usageReports += 1;
    this.changed = true;
    return ignored;
  }

  /** The usage accounts so far (usage.ts). */
  accounts(): ModelAccount[] {
    return accounts(this.summary.usage);
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
    } catch (error) {
      this.changed = true;
      this.refused(error);
    }
  }

  private write(state: WatchState, now: number, toWall: (mono: number) => string): void {
    const spend = this.price(this.accounts(), new Date(toWall(now)));
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
        tokens: spend.tokens,
        thread: state.thread,
        usage: spend.usage,
        costUsd: spend.costUsd,
        costSource: spend.costSource,
        slotWaitMs: Math.round(state.slotWaitedMs),
      },
      this.files,
    );
  }
}
