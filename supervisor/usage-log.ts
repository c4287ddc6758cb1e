import * as fs from "node:fs";
import type { UsageLog, UsageLogContext } from "../src/backends/types.js";
import type { UsageReport } from "../src/domain/spend/usage.js";
import type { LineFacts } from "../src/domain/watch/facts.js";
import { FILES, fileIn } from "../src/folder/layout.js";
import { usageLine } from "../src/folder/usage-file.js";
import { appendLine } from "../src/infra/atomic.js";
import { LineReader } from "../src/infra/line-reader.js";

// The CLI's own usage log, read while the agent runs (specs/supervisor.md, "Spending"): codex's rollout
// and gemini's session file name each model response's usage as it completes, where their streams report
// usage once at the end. Found by the thread id once the stream names it; read from its beginning in
// bites like the stream; only what is dated from the agent's start on counts (a resumed thread's file
// holds its earlier runs too). Each report read is appended to usage.jsonl, so that the record — made
// from the folder's files — counts it too. A log that cannot be found or read leaves the stream's figures.

/** Looked for at most this often until found: a search lists a few folders. */
export const LOCATE_EVERY_MS = 1000;
/** Lines of the log are read in bites of this much, as the stream is. */
const BITE_BYTES = 1024 * 1024;

export class UsageLogReader {
  /** The path being read, once found. */
  path: string | null = null;
  private reader: LineReader | null = null;
  /** The line last appended to usage.jsonl: a message written again unchanged is not written twice. */
  private lastWritten = "";
  private lookedAt = Number.NEGATIVE_INFINITY;
  /** The model of the turn being read (codex's turn_context), for reports that name none. */
  private model: string | null = null;
  private readonly usageFile: string;

  constructor(
    dir: string,
    private readonly log: UsageLog,
    private readonly env: Readonly<Record<string, string | undefined>>,
    /** The agent's start (ms since the epoch): lines dated before belong to an earlier run. */
    private readonly fromWallMs: number,
  ) {
    this.usageFile = fileIn(dir, FILES.usage);
  }

  /**
   * Reads what the log gained since the last call: the facts of its new reports, in order. `last`: the
   * agent has exited, and a log not found yet is looked for now (a CLI that exits within a second of
   * naming its thread writes the whole of it before the next search would be due).
   */
  read(thread: string | null, now: number, last = false): LineFacts[] {
    if (this.reader === null) {
      if (thread === null || (!last && now - this.lookedAt < LOCATE_EVERY_MS)) return [];
      this.lookedAt = now;
      this.path = this.log.locate(thread, fileSystemContext(this.env));
      if (this.path === null) return [];
      this.reader = new LineReader(this.path);
    }
    const out: LineFacts[] = [];
    for (let more = true; more; ) {
      const bite = this.reader.read(BITE_BYTES);
      more = bite.bytes >= BITE_BYTES;
      for (const line of bite.lines) this.take(line, out);
    }
    return out;
  }

  private take(line: string, out: LineFacts[]): void {
    let parsed: ReturnType<UsageLog["parse"]>;
    try {
      parsed = this.log.parse(line);
    } catch {
      return;
    }
    if (parsed === null) return;
    const at = parsed.at === null ? Number.NaN : Date.parse(parsed.at);
    if (Number.isFinite(at) && at < this.fromWallMs) return;
    if (parsed.model !== undefined) this.model = parsed.model;
    const facts = parsed.facts;
    if (facts === undefined) return;
    if (facts.usage === undefined) {
      out.push({ progress: false, ...facts });
      return;
    }
    const report: UsageReport = {
      ...facts.usage,
      uses: facts.usage.uses.map((u) => ({ ...u, model: u.model ?? this.model })),
    };
    const written = usageLine(null, report);
    if (written !== this.lastWritten) appendLine(this.usageFile, usageLine(parsed.at, report));
    this.lastWritten = written;
    out.push({ progress: false, usage: report });
  }

  close(): void {
    this.reader?.close();
  }
}

/** What `locate` may look at: folder listings and a file's first line, read now. */
const fileSystemContext = (env: Readonly<Record<string, string | undefined>>): UsageLogContext => ({
  env,
  listDir(path) {
    try {
      return fs.readdirSync(path);
    } catch {
      return [];
    }
  },
  firstLine(path) {
    try {
      const fd = fs.openSync(path, "r");
      try {
        const buffer = Buffer.alloc(64 * 1024);
        const n = fs.readSync(fd, buffer, 0, buffer.length, 0);
        const text = buffer.toString("utf8", 0, n);
        const end = text.indexOf("\n");
        return end === -1 ? text : text.slice(0, end);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      return null;
    }
  },
});
