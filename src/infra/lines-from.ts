import * as fs from "node:fs";
import { CatherdError } from "../domain/errors.js";
import { MAX_LINE_BYTES } from "./line-reader.js";

const CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;
const RETURN = 0x0d;

export interface LinesFrom {
  /** The byte offset just after the last line handed over: where the next read starts (a cursor). */
  next: number;
  /** The file is shorter than the offset asked for (replaced or truncated): reading started at 0. */
  restarted: boolean;
}

/**
 * Hands each complete line of `file` from byte offset `from` to `onLine`, with the offset just after it
 * (a cursor that resumes after that line), as far as the file reached when
 * the call began. Offsets are exact bytes, so the returned `next` resumes on a line boundary. An
 * unterminated last line is held back (its writer may still be writing it) unless `final` says the file
 * will not grow. A line over `maxLineBytes` (default MAX_LINE_BYTES) is skipped. A missing file yields
 * nothing (not written yet); one that cannot be read, or is not a regular file (a FIFO is never opened
 * for a blocking read), is E_IO_READ naming it. Each line is decoded as UTF-8 (an invalid byte reads as
 * U+FFFD), without its newline and a carriage return that ends it.
 */
export function readLinesFrom(
  file: string,
  from: number,
  onLine: (line: string, end: number) => void,
  options: { final?: boolean; maxLineBytes?: number } = {},
): LinesFrom {
  return readLineBytesFrom(
    file,
    from,
    (bytes, end) => {
      let length = bytes.at(-1) === NEWLINE ? bytes.length - 1 : bytes.length;
      if (bytes[length - 1] === RETURN) length -= 1;
      onLine(bytes.toString("utf8", 0, length), end);
    },
    options,
  );
}

/**
 * As readLinesFrom, each line as the bytes the file holds, its newline included when it has one (the
 * last line of a `final` file may have none): written one after the other they are the file's bytes from
 * `from` to `next`, but for a line skipped as too long. The Buffer is the callee's to keep.
 */
export function readLineBytesFrom(
  file: string,
  from: number,
  onLine: (bytes: Buffer, end: number) => void,
  { final = false, maxLineBytes = MAX_LINE_BYTES }: { final?: boolean; maxLineBytes?: number } = {},
): LinesFrom {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { next: from, restarted: false };
    throw unreadable(file, error instanceof Error ? error.message : String(error), error);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw unreadable(file, "not a regular file", null);
    const restarted = stat.size < from;
    let next = restarted ? 0 : from;
    let carry: Buffer[] = [];
    let carryBytes = 0;
    let skipping = false;
    const emit = (piece: Buffer, end: number) => {
      onLine(carry.length === 0 ? Buffer.from(piece) : Buffer.concat([...carry, piece]), end);
    };
    const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(stat.size - next, 1)));
    for (let position = next; position < stat.size; ) {
      const n = fs.readSync(fd, buffer, 0, Math.min(buffer.length, stat.size - position), position);
      if (n <= 0) break;
      const chunk = buffer.subarray(0, n);
      let start = 0;
      for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
        if (!skipping && carryBytes + (nl - start) <= maxLineBytes)
          emit(chunk.subarray(start, nl + 1), position + nl + 1);
        skipping = false;
        carry = [];
        carryBytes = 0;
        start = nl + 1;
        next = position + start;
      }
      if (start < n && !skipping) {
        carryBytes += n - start;
        if (carryBytes > maxLineBytes) {
          skipping = true;
          carry = [];
          carryBytes = 0;
        } else {
          carry.push(Buffer.from(chunk.subarray(start, n)));
        }
      }
      position += n;
    }
    if (final) {
      if (carryBytes > 0) emit(Buffer.alloc(0), stat.size);
      next = stat.size;
    }
    return { next, restarted };
  } finally {
    fs.closeSync(fd);
  }
}

function unreadable(file: string, why: string, cause: unknown): CatherdError {
  return new CatherdError("E_IO_READ", `cannot read ${file}: ${why}`, {
    fix: `inspect it with: ls -l ${file}`,
    cause,
    file,
  });
}
