import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readLineBytesFrom, readLinesFrom } from "../../src/infra/lines-from.js";
import { tempDir } from "../helpers/folders.js";

function read(file: string, from: number, options: { final?: boolean; maxLineBytes?: number } = {}) {
  const lines: string[] = [];
  const result = readLinesFrom(file, from, (line) => lines.push(line), options);
  return { lines, ...result };
}

describe("readLinesFrom", () => {
  it("returns complete lines and a cursor that resumes exactly after them", () => {
    const file = path.join(tempDir(), "events.jsonl");
    fs.writeFileSync(file, "one\r\ntwo\nthr");
    const first = read(file, 0);
    expect(first).toEqual({ lines: ["one", "two"], next: 9, restarted: false });
    fs.appendFileSync(file, "ee\n€uro\n");
    expect(read(file, first.next)).toEqual({ lines: ["three", "€uro"], next: 22, restarted: false });
    expect(read(file, 22)).toEqual({ lines: [], next: 22, restarted: false });
  });

  it("holds back an unterminated last line unless the file is final", () => {
    const file = path.join(tempDir(), "events.jsonl");
    fs.writeFileSync(file, "a\nhalf");
    expect(read(file, 0)).toMatchObject({ lines: ["a"], next: 2 });
    expect(read(file, 2, { final: true })).toMatchObject({ lines: ["half"], next: 6 });
  });

  it("skips a line longer than the cap, within one chunk or across chunks, and goes on after it", () => {
    const file = path.join(tempDir(), "events.jsonl");
    fs.writeFileSync(file, `short\n${"x".repeat(50)}\nafter\n${"y".repeat(3 * 1024 * 1024)}\nlast\n`);
    expect(read(file, 0, { maxLineBytes: 10 }).lines).toEqual(["short", "after", "last"]);
  });

  it("keeps multibyte characters whole across its 1 MiB reads", () => {
    const file = path.join(tempDir(), "events.jsonl");
    const line = "é".repeat(300_001); // 600,002 bytes: the second line straddles the first read
    fs.writeFileSync(file, `${line}\n${line}\n`);
    expect(read(file, 0).lines).toEqual([line, line]);
  });

  it("starts again at 0 when the file is shorter than the cursor, and yields nothing for a missing file", () => {
    const file = path.join(tempDir(), "events.jsonl");
    fs.writeFileSync(file, "new\n");
    expect(read(file, 100)).toEqual({ lines: ["new"], next: 4, restarted: true });
    expect(read(path.join(tempDir(), "missing"), 7)).toEqual({ lines: [], next: 7, restarted: false });
  });
});

describe("readLineBytesFrom", () => {
  it("hands the file's own bytes, newlines, CRLF and invalid UTF-8 included, that add up to the file", () => {
    const file = path.join(tempDir(), "events.jsonl");
    const bytes = Buffer.concat([
      Buffer.from("one\r\n"),
      Buffer.from([0xff, 0xfe, 0x0a]),
      Buffer.from("\u001b]0;t\u0007x\n"),
      Buffer.from("no end"),
    ]);
    fs.writeFileSync(file, bytes);
    const held: Buffer[] = [];
    const first = readLineBytesFrom(file, 0, (line) => held.push(line));
    expect(Buffer.concat(held)).toEqual(bytes.subarray(0, first.next));
    readLineBytesFrom(file, first.next, (line) => held.push(line), { final: true });
    expect(Buffer.concat(held)).toEqual(bytes);
    const decoded: string[] = [];
    readLinesFrom(file, 0, (line) => decoded.push(line), { final: true });
    expect(decoded).toEqual(["one", "\ufffd\ufffd", "\u001b]0;t\u0007x", "no end"]);
  });
});
