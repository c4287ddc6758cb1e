import * as fs from "node:fs";
import { StringDecoder } from "node:string_decoder";

/** The longest line kept (specs/supervisor.md, "The loop"); a longer one is dropped and reading resumes at its newline. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** Read and decoded this much at a time: text this small lives and dies in V8's young generation. */
const CHUNK_BYTES = 64 * 1024;

export interface ReadResult {
  lines: string[];
  /** Lines dropped for exceeding the cap since the last call. */
  dropped: number;
  /** The file shrank or was replaced since the last call; reading restarted at its beginning. */
  restarted: boolean;
  /** Bytes consumed by this call. */
  bytes: number;
}

/**
 * Reads a growing file line by line from a saved offset, never rereading what it has read. Decodes UTF-8
 * across reads, keeps an unterminated last line for the next call, caps lines, and survives the file
 * shrinking, being replaced, or vanishing.
 */
export class LineReader {
  private fd: number | null = null;
  private ino = -1;
  private offset = 0;
  private decoder = new StringDecoder("utf8");
  private partial: string[] = [];
  private partialBytes = 0;
  private skipping = false;
  private readonly buffer: Buffer;

  constructor(
    private readonly file: string,
    private readonly maxLineBytes = MAX_LINE_BYTES,
  ) {
    this.buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(maxLineBytes, 4096)));
  }

  /** Reads the complete lines written since the last call, up to about `budgetBytes` of input. */
  read(budgetBytes = Number.POSITIVE_INFINITY): ReadResult {
    const result: ReadResult = { lines: [], dropped: 0, restarted: false, bytes: 0 };
    let stat: fs.Stats;
    try {
      stat = fs.statSync(this.file);
    } catch {
      this.close(); // vanished: a new file by that name starts from its beginning
      if (this.offset > 0) this.reset(result);
      return result;
    }
    if (stat.ino !== this.ino || stat.size < this.offset) {
      if (this.offset > 0 || this.partial.length > 0) this.reset(result);
      this.close();
    }
    if (stat.size === this.offset) return result;
    if (this.fd === null) {
      try {
        this.fd = fs.openSync(this.file, "r");
        this.ino = fs.fstatSync(this.fd).ino;
      } catch {
        return result;
      }
    }
    for (;;) {
      const n = fs.readSync(this.fd, this.buffer, 0, this.buffer.length, this.offset);
      if (n <= 0) break;
      this.offset += n;
      result.bytes += n;
      this.take(this.decoder.write(this.buffer.subarray(0, n)), result);
      if (n < this.buffer.length || result.bytes >= budgetBytes) break;
    }
    return result;
  }

  /** Returns the unterminated last line, if any, as a final line (call once the writer is gone). */
  flush(): ReadResult {
    const result = this.read();
    const tail = this.partial.join("") + this.decoder.end();
    this.partial = [];
    this.partialBytes = 0;
    if (!this.skipping && tail.length > 0) result.lines.push(stripCr(tail));
    this.skipping = false;
    return result;
  }

  close(): void {
    if (this.fd !== null) {
      try {
        fs.closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = null;
    }
  }

  private reset(result: ReadResult): void {
    result.restarted = true;
    this.offset = 0;
    this.ino = -1;
    this.decoder = new StringDecoder("utf8");
    this.partial = [];
    this.partialBytes = 0;
    this.skipping = false;
  }

  private take(text: string, result: ReadResult): void {
    let start = 0;
    for (let nl = text.indexOf("\n", start); nl !== -1; nl = text.indexOf("\n", start)) {
      const piece = text.slice(start, nl);
      start = nl + 1;
      if (this.skipping) {
        this.skipping = false;
        continue;
      }
      if (this.partialBytes + piece.length > this.maxLineBytes) {
        this.partial = [];
        this.partialBytes = 0;
        result.dropped += 1;
        continue;
      }
      const line = this.partial.length === 0 ? piece : this.partial.join("") + piece;
      this.partial = [];
      this.partialBytes = 0;
      result.lines.push(stripCr(line));
    }
    if (start < text.length && !this.skipping) {
      const rest = text.slice(start);
      // UTF-16 length is a lower bound of the UTF-8 byte length: good enough for a memory cap.
      if (this.partialBytes + rest.length > this.maxLineBytes) {
        this.partial = [];
        this.partialBytes = 0;
        this.skipping = true;
        result.dropped += 1;
      } else {
        this.partial.push(rest);
        this.partialBytes += rest.length;
      }
    }
  }
}

function stripCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
