import * as fs from "node:fs";
import type { Readable } from "node:stream";

// Reading input that has a size limit without trusting it to end: a pipe from `yes`, a character device
// such as /dev/zero, or a file that grows while it is read. What is kept stops at the limit; a stream is
// drained a bounded way past it (so that a finite writer ends cleanly), never read without end.

const CHUNK_BYTES = 64 * 1024;

/** What a capped read found: every byte, or that there were more than `max` (how many were read then). */
export type CappedRead = { kind: "whole"; bytes: Buffer } | { kind: "over"; read: number };

/** Past its limit, a stream is drained of at most this many times the limit before it is cut. */
export const DRAIN_FACTOR = 8;

/**
 * A stream's bytes to its end, or "over" once it passes `max` bytes. Over the limit the rest is read and
 * thrown away, up to `drainMax` bytes more, so that a finite writer (a file piped in) finishes its writes
 * and sees no EPIPE; a stream still going after that — `yes`, /dev/zero — is destroyed unread to its end,
 * and its writer gets EPIPE (or SIGPIPE) on its next write, as a writer to `head -c` does. Either way the
 * cost is bounded: at most `max` bytes kept, `max + drainMax` and a chunk read.
 */
export async function readStreamCapped(
  stream: Readable,
  max: number,
  drainMax = max * DRAIN_FACTOR,
): Promise<CappedRead> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop early (return) destroys the stream: the for-await iterator's contract.
  for await (const chunk of stream) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size <= max) chunks.push(buffer);
    else if (size > max + drainMax) return { kind: "over", read: size };
  }
  return size > max ? { kind: "over", read: size } : { kind: "whole", bytes: Buffer.concat(chunks, size) };
}

/**
 * An open file's bytes from its start to its end, or "over" once more than `max` have been read: a
 * regular file that grows while it is read, or a file of /proc that says it is empty and is not, is read
 * no further than that.
 */
export function readFdCapped(fd: number, max: number): CappedRead {
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    const n = fs.readSync(fd, buffer, 0, buffer.length, size);
    if (n === 0) return { kind: "whole", bytes: Buffer.concat(chunks, size) };
    size += n;
    if (size > max) return { kind: "over", read: size };
    chunks.push(buffer.subarray(0, n));
  }
}
