import * as path from "node:path";
import { readDispatch } from "../../dispatch/reader.js";
import type { RecordFile } from "../../domain/schemas.js";
import { handOverPending } from "../../folder/chain.js";
import { FILES } from "../../folder/layout.js";
import { readQuestions } from "../../folder/question-files.js";
import { readFolderJson } from "../../folder/read.js";
import { type Clock, systemClock } from "../../infra/clock.js";
import { okValue } from "../../infra/json-file.js";
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

/** What the server tells its client when a dispatch it made or talks to asks a question (specs/mcp.md). */
export interface QuestionNotice {
  event: "question";
  name: string | null;
  dispatchId: string;
  /** The question's id, for the answer tool. */
  id: string;
  kind: "permission" | "question";
  asks: string;
  /** When its --on-question policy answers if nobody does. */
  answerBy: string;
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
    private readonly notify: (notice: RecordedNotice | QuestionNotice) => void,
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
    const asked = new Set<string>();
    return waitUntil(
      async () => {
        this.noticeQuestions(dir, asked);
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
        watch: watchFolders(
          [dir, path.join(dir, FILES.questions)],
          [FILES.record, FILES.next, FILES.questions],
        ),
        signal: this.closing.signal,
      },
    );
  }

  /** Each question asked and not answered yet, once. */
  private noticeQuestions(dir: string, asked: Set<string>): void {
    if (this.closing.signal.aborted) return;
    let admit: { name: string; dispatchId: string } | null = null;
    for (const entry of readQuestions(dir)) {
      const q = entry.question;
      if (asked.has(q.id) || entry.answer !== null) continue;
      asked.add(q.id);
      admit ??= okValue(readFolderJson(dir, FILES.admit));
      this.notify({
        event: "question",
        name: admit?.name ?? null,
        dispatchId: admit?.dispatchId ?? path.basename(dir),
        id: q.id,
        kind: q.kind,
        asks: q.asks,
        answerBy: q.answerBy,
      });
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
