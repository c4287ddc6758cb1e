import { readDispatch } from "../../dispatch/reader.js";
import type { RecordFile } from "../../domain/schemas.js";
import { handOverPending } from "../../folder/chain.js";
import { FILES } from "../../folder/layout.js";
import { type Clock, systemClock } from "../../infra/clock.js";
import { waitUntil, watchFolders } from "../../infra/wait-until.js";
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
 * Watches the dispatches one server session made and calls `notify` once for each, when it has ended —
 * for a chain (--fallback), when its last attempt has a record that hands over to nothing: the notice names
 * that attempt. Each is read through the reader gate (so a dispatch found dead is recorded `lost`, and a
 * due hand-over is done, as every reader does), woken by file events in its folder, with a slow poll as
 * a fallback.
 */
export class RecordNotifier {
  private readonly watched = new Set<string>();
  private readonly closing = new AbortController();

  constructor(
    private readonly notify: (notice: RecordedNotice) => void,
    private readonly pollMs = NOTIFY_POLL_MS,
    private readonly clock: Clock = systemClock,
  ) {}

  watch(dir: string): void {
    if (this.closing.signal.aborted || this.watched.has(dir)) return;
    this.watched.add(dir);
    void this.untilEnded(dir).then((record) => {
      this.watched.delete(dir);
      if (record !== undefined && !this.closing.signal.aborted) this.notify(noticeOf(record));
    });
  }

  /** Stops watching; nothing is notified after this. */
  close(): void {
    this.closing.abort();
  }

  private untilEnded(dir: string): Promise<RecordFile | undefined> {
    return waitUntil(
      async () => {
        try {
          const view = await readDispatch(dir, { clock: this.clock, chain: "last" });
          return view.record !== null && !handOverPending(view.dir, view.record) ? view.record : undefined;
        } catch {
          // A folder that cannot be read now is looked at again at the next poll.
          return undefined;
        }
      },
      {
        clock: this.clock,
        deadline: Number.POSITIVE_INFINITY,
        pollMs: this.pollMs,
        watch: watchFolders([dir], [FILES.record, FILES.next]),
        signal: this.closing.signal,
      },
    );
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
