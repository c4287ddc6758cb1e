import * as fs from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { writeExit } from "../../src/folder/exit.js";
import { FILES, fileIn } from "../../src/folder/layout.js";
import { writeRecord } from "../../src/folder/record.js";
import { systemClock } from "../../src/infra/clock.js";
import { tempDir } from "../helpers/folders.js";

// A record always comes (specs/record.md): an error of catherd's own while it builds the record gives a
// record that says so; a disk that refuses a write is left to a later reader. The error is made by
// replacing the fold of the streams, the first step of building a record.

const failure = vi.hoisted(() => ({ error: null as unknown }));
vi.mock("../../src/folder/summarize.js", () => ({
  summarizeDispatch: () => {
    throw failure.error;
  },
}));

afterEach(() => {
  failure.error = null;
});

function endedFolder(): string {
  const dir = tempDir("catherd-record-fallback-");
  fs.writeFileSync(fileIn(dir, FILES.spec), JSON.stringify({ schema: 1, backend: "codex", cmd: "codex" }));
  writeExit(dir, {
    reason: "exited",
    code: 0,
    signal: null,
    startedAt: "2026-11-30T10:00:00.000Z",
    endedAt: "2026-11-30T10:05:00.000Z",
    durationMs: 300_000,
    pid: 4242,
    sawFinal: true,
    thread: "t-1",
    openToolCalls: [],
    retries: 0,
    lastEventAt: null,
    stalled: false,
    stop: { term: false, kill: false, swept: 0 },
    error: null,
    kind: null,
    adoptions: 0,
    containment: null,
    cpuSeconds: null,
    peakMemoryBytes: null,
    oomKills: null,
  });
  return dir;
}

describe("a record always comes", () => {
  it("records an error while building the record as kind record, with its words, never the disk's fix", async () => {
    const dir = endedFolder();
    failure.error = new RangeError("Maximum call stack size exceeded");
    const record = await writeRecord(dir, systemClock);
    expect(record).toMatchObject({
      status: "failed",
      reason: "exited",
      exitCode: 0,
      thread: "t-1",
      reply: null,
      error: {
        code: "E_INTERNAL",
        kind: "record",
        message:
          "catherd could not build this dispatch's record: Maximum call stack size exceeded (the agent ended: exited, exit code 0; its files are kept in the folder)",
      },
    });
    expect(record?.error?.message).not.toMatch(/disk/);
    const onDisk = JSON.parse(fs.readFileSync(fileIn(dir, FILES.record), "utf8"));
    expect(onDisk.error.kind).toBe("record");
    // Written once: a second writer finds it.
    expect(await writeRecord(dir, systemClock)).toBeNull();
  });

  it("leaves a write the disk refused to a later reader: it throws, and no record is written", async () => {
    const dir = endedFolder();
    failure.error = Object.assign(new Error("ENOSPC: no space left on device, write"), {
      code: "ENOSPC",
      syscall: "write",
    });
    await expect(writeRecord(dir, systemClock)).rejects.toThrow(/ENOSPC/);
    expect(fs.existsSync(fileIn(dir, FILES.record))).toBe(false);
  });
});
