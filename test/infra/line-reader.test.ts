import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { LineReader } from "../../src/infra/line-reader.js";
import { tempDir } from "../helpers/folders.js";

function setup() {
  const file = path.join(tempDir(), "events.jsonl");
  return { file, reader: new LineReader(file, 64) };
}

describe("LineReader", () => {
  it("reads only new bytes and keeps an unterminated line for the next read", () => {
    const { file, reader } = setup();
    expect(reader.read().lines).toEqual([]);
    fs.writeFileSync(file, "one\ntw");
    expect(reader.read()).toMatchObject({ lines: ["one"], bytes: 6 });
    fs.appendFileSync(file, "o\r\nthree\n");
    expect(reader.read().lines).toEqual(["two", "three"]);
    expect(reader.read()).toMatchObject({ lines: [], bytes: 0 });
  });

  it("decodes a UTF-8 character split across two writes", () => {
    const { file, reader } = setup();
    const bytes = Buffer.from("€uro\n");
    fs.writeFileSync(file, bytes.subarray(0, 2));
    expect(reader.read().lines).toEqual([]);
    fs.appendFileSync(file, bytes.subarray(2));
    expect(reader.read().lines).toEqual(["€uro"]);
  });

  it("drops a line over the cap and resynchronises at the next newline", () => {
    const { file, reader } = setup();
    fs.writeFileSync(file, `${"x".repeat(50)}`);
    expect(reader.read()).toMatchObject({ lines: [], dropped: 0 });
    fs.appendFileSync(file, `${"x".repeat(50)}\nafter\n`);
    expect(reader.read()).toMatchObject({ lines: ["after"], dropped: 1 });
  });

  it("starts over when the file is truncated, replaced or removed", () => {
    const { file, reader } = setup();
    fs.writeFileSync(file, "a\nb\n");
    expect(reader.read().lines).toEqual(["a", "b"]);
    fs.writeFileSync(file, "c\n");
    expect(reader.read()).toMatchObject({ lines: ["c"], restarted: true });
    fs.rmSync(file);
    expect(reader.read()).toMatchObject({ lines: [], restarted: true });
    const other = `${file}.new`;
    fs.writeFileSync(other, "d\ne\nf\n");
    fs.renameSync(other, file);
    expect(reader.read().lines).toEqual(["d", "e", "f"]);
    reader.close();
  });

  it("returns the last line without a newline on flush", () => {
    const { file, reader } = setup();
    fs.writeFileSync(file, "done\npartial");
    expect(reader.flush().lines).toEqual(["done", "partial"]);
  });

  it("reads in bounded bites when asked", () => {
    const file = path.join(tempDir(), "big.jsonl");
    fs.writeFileSync(file, "line\n".repeat(400_000));
    const reader = new LineReader(file);
    const first = reader.read(1024 * 1024);
    expect(first.bytes).toBe(1024 * 1024);
    let total = first.lines.length;
    for (let r = reader.read(1024 * 1024); r.bytes > 0; r = reader.read(1024 * 1024)) total += r.lines.length;
    expect(total).toBe(400_000);
  });
});
