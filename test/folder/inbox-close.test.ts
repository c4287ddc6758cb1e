import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readEntry } from "../../src/folder/inbox-files.js";
import { closeInbox, writeMessage } from "../../src/folder/inbox-send.js";
import { tempDir } from "../helpers/folders.js";

// The end of a dispatch's inbox (specs/steering.md, "Nothing stays queued past the end"): once exit.json
// is there, a sender writes nothing, and what was queued before is failed by the record's writer.

const body = { text: "one more thing", interrupt: false, from: "test" };
const at = () => new Date("2026-12-01T10:00:00.000Z");

describe("an inbox at its dispatch's end", () => {
  it("fails what was queued, with why; a message sent after the end is not written", async () => {
    const dir = tempDir();
    const before = await writeMessage(dir, body, at);
    if (before === null) throw new Error("the message was not written");
    fs.writeFileSync(path.join(dir, "exit.json"), "{}");
    expect(await writeMessage(dir, body, at)).toBeNull();
    await closeInbox(dir, true, at());
    expect(readEntry(dir, before.id)).toMatchObject({ state: "failed" });
    expect(readEntry(dir, before.id).receipt?.history.at(-1)).toEqual({
      state: "failed",
      at: "2026-12-01T10:00:00.000Z",
      why: "the dispatch was cancelled",
    });
    expect(fs.readdirSync(path.join(dir, "inbox")).filter((n) => !n.endsWith(".state.json"))).toHaveLength(1);
  });

  it("says a dispatch that ended by itself ended before delivering; leaves what was delivered alone", async () => {
    const dir = tempDir();
    await closeInbox(dir, false, at());
    expect(fs.existsSync(path.join(dir, "inbox"))).toBe(false);
    const queued = await writeMessage(dir, body, at);
    if (queued === null) throw new Error("the message was not written");
    await closeInbox(dir, false, at());
    expect(readEntry(dir, queued.id).receipt?.history.at(-1)?.why).toBe(
      "the dispatch ended before it was delivered",
    );
  });
});
