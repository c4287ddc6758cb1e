import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MAX_FILE_DEPTH } from "../../src/domain/text/json-depth.js";
import { parseJsonText } from "../../src/infra/json-file.js";

// A dispatch folder's file nested deeper than catherd writes one (an agent can write a lock report) is
// invalid, never walked (specs/dispatch-folder.md).

const loose = z.object({ schema: z.literal(1) }).passthrough();

function nested(levels: number): string {
  return `${'{"c":'.repeat(levels - 1)}{"schema":1}${"}".repeat(levels - 1)}`;
}

describe("parseJsonText", () => {
  it.each([
    [MAX_FILE_DEPTH, "ok"],
    [MAX_FILE_DEPTH + 1, "invalid"],
    [20_000, "invalid"],
  ])("reads a file %i levels deep as %s", (levels, kind) => {
    const text = `{"schema":1,"x":${nested(levels - 1)}}`;
    const read = parseJsonText("/d/lock-1-2.json", text, loose);
    expect(read.kind).toBe(kind);
    if (read.kind === "invalid") {
      expect(read.error.message).toMatch(`deeper than catherd's limit of ${MAX_FILE_DEPTH} levels`);
    }
  });
});
