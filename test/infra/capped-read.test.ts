import * as fs from "node:fs";
import * as path from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readFdCapped, readStreamCapped } from "../../src/infra/capped-read.js";
import { tempDir } from "../helpers/folders.js";

// Input with a limit is read to the limit and not a byte-chunk further, whether or not it ever ends.

/** A stream that never ends: 64 KiB of "y\n" each time it is asked. */
function endless(): Readable & { pulled: () => number } {
  let pulled = 0;
  const chunk = Buffer.from("y\n".repeat(32 * 1024));
  const stream = new Readable({
    read() {
      pulled += chunk.length;
      this.push(chunk);
    },
  });
  return Object.assign(stream, { pulled: () => pulled });
}

describe("readStreamCapped", () => {
  it("stops an endless stream once it has drained it a bounded way past the limit, and destroys it", async () => {
    const stream = endless();
    const read = await readStreamCapped(stream, 1024 * 1024);
    // The limit, then eight times it drained, then the chunk that went past.
    expect(read).toEqual({ kind: "over", read: 9 * 1024 * 1024 + 64 * 1024 });
    expect(stream.destroyed).toBe(true);
    // What was pulled ahead (the stream's own buffer) stays within a few chunks of that.
    expect(stream.pulled()).toBeLessThan(10 * 1024 * 1024);
  });

  it("drains a finite stream over the limit to its end before it says so", async () => {
    const chunks = Array.from({ length: 40 }, () => Buffer.alloc(64 * 1024, 1));
    const stream = Readable.from(chunks);
    expect(await readStreamCapped(stream, 1024 * 1024)).toEqual({ kind: "over", read: 40 * 64 * 1024 });
    expect(stream.readableEnded).toBe(true);
  });

  it("returns a stream that ends within the limit whole, the limit itself included", async () => {
    expect(await readStreamCapped(Readable.from([Buffer.from("ab"), Buffer.from("c")]), 3)).toEqual({
      kind: "whole",
      bytes: Buffer.from("abc"),
    });
    expect(await readStreamCapped(Readable.from([Buffer.from("abcd")]), 3)).toEqual({
      kind: "over",
      read: 4,
    });
  });
});

describe("readFdCapped", () => {
  it("reads a file whole, or stops once past the limit", () => {
    const file = path.join(tempDir(), "brief.md");
    fs.writeFileSync(file, "x".repeat(200_000));
    const fd = fs.openSync(file, "r");
    try {
      expect(readFdCapped(fd, 200_000)).toMatchObject({ kind: "whole" });
      expect(readFdCapped(fd, 100_000)).toEqual({ kind: "over", read: 131_072 });
    } finally {
      fs.closeSync(fd);
    }
  });
});
