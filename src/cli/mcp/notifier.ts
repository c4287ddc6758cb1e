import * as fs from "node:fs";
import { inspectDispatch } from "../../dispatch/inspect.js";
import { settleIfDead } from "../../dispatch/settle.js";
import type { RecordFile } from "../../domain/schemas.js";

/** How often the folders are looked at when no file event came (fs.watch can miss events). */
export const NOTIFY_POLL_MS = 1000;

/** What the server tells its client when a dispatch it made is recorded (specs/mcp.md). */
export interface RecordedNotice {
  event: "recorded";
  name: string | null;
  dispatchId: string;
  run: string | null;
  status: RecordFile["status"];
  reason: RecordFile["reason"];
  /** record.error.kind, when the record has one. */
  kind?: string;
  secs: number | null;
  /** The first line of the reply (at most 200 characters), null without a reply. */
  reply: string | null;
}

/**
 * Watches the folders of the dispatches one server session made and calls `notify` once for each, when
 * its record exists. Wakes on file events in the folder, with a slow poll as a fallback; a dispatch found
 * dead meanwhile is recorded `lost` (as every reader does) and notified as such.
 */
export class RecordNotifier {
  private readonly watched = new Map<string, fs.FSWatcher | null>();
  private readonly checking = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly notify: (notice: RecordedNotice) => void,
    private readonly pollMs = NOTIFY_POLL_MS,
  ) {}

  watch(dir: string): void {
    if (this.closed || this.watched.has(dir)) return;
    let watcher: fs.FSWatcher | null = null;
    try {
      watcher = fs.watch(dir, () => void this.check(dir));
      watcher.on("error", () => {}); // the poll covers a watch that breaks
      watcher.unref();
    } catch {
      // the poll covers it
    }
    this.watched.set(dir, watcher);
    if (this.timer === null) {
      this.timer = setInterval(() => {
        for (const d of this.watched.keys()) void this.check(d);
      }, this.pollMs);
      this.timer.unref();
    }
    void this.check(dir);
  }

  /** Stops watching; nothing is notified after this. */
  close(): void {
    this.closed = true;
    for (const watcher of this.watched.values()) watcher?.close();
    this.watched.clear();
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private async check(dir: string): Promise<void> {
    if (this.checking.has(dir) || !this.watched.has(dir)) return;
    this.checking.add(dir);
    try {
      const view = await settleIfDead(inspectDispatch(dir));
      if (view.record === null || this.closed || !this.watched.has(dir)) return;
      this.watched.get(dir)?.close();
      this.watched.delete(dir);
      if (this.watched.size === 0 && this.timer !== null) {
        clearInterval(this.timer);
        this.timer = null;
      }
      this.notify(noticeOf(view.record));
    } catch {
      // A folder that cannot be read now is looked at again at the next poll.
    } finally {
      this.checking.delete(dir);
    }
  }
}

export function noticeOf(record: RecordFile): RecordedNotice {
  const kind = (record.error as { kind?: unknown } | null)?.kind;
  const line = record.reply?.trim().split("\n")[0] ?? null;
  return {
    event: "recorded",
    name: record.name,
    dispatchId: record.dispatchId,
    run: record.run,
    status: record.status,
    reason: record.reason,
    ...(typeof kind === "string" ? { kind } : {}),
    secs: record.secs,
    reply: line === null ? null : line.length > 200 ? `${line.slice(0, 200)}…` : line,
  };
}
