import * as fs from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { inspectDispatch } from "../../src/dispatch/read/inspect.js";
import { recordDead } from "../../src/dispatch/settle/settle.js";
import { writeExit } from "../../src/folder/exit.js";
import { FILES, fileIn } from "../../src/folder/layout.js";
import { systemClock } from "../../src/infra/clock.js";
import { tempDir } from "../helpers/folders.js";

// A reader that cannot record an ended dispatch says why with that error's own code and fix (specs/record.md,
// "A record always comes"): "free disk space" only for a write the disk refused. The record writer is
// replaced by one that throws what each case needs.

const thrown = vi.hoisted(() => ({ error: null as unknown }));
vi.mock("../../src/folder/record.js", () => ({
  writeRecord: async () => {
    throw thrown.error;
  },
}));

/** A folder its supervisor ended (exit.json) without a record: a reader's to record. */
function exitedFolder(): string {
  const dir = tempDir("catherd-record-refused-");
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
    thread: null,
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

describe("a record that cannot be written, as a reader says it", () => {
  it("says catherd's own error with its code and fix, never 'free disk space'", async () => {
    const dir = exitedFolder();
    const view = inspectDispatch(dir, { clock: systemClock });
    expect(view.duty).toBe("record");
    thrown.error = new RangeError("Maximum call stack size exceeded");
    const after = await recordDead(view, systemClock);
    const problem = after.problems.find((p) => p.file === fileIn(dir, FILES.record));
    expect(problem?.code).toBe("E_INTERNAL");
    expect(problem?.message).toBe(`cannot record ${dir}: Maximum call stack size exceeded`);
    expect(problem?.fix).toMatch(/^this is a bug in catherd/);
    expect(problem?.fix).not.toMatch(/disk/);
  });

  it("says a write the disk refused with E_IO_WRITE and the fix of freeing space", async () => {
    const dir = exitedFolder();
    thrown.error = Object.assign(new Error("EROFS: read-only file system, open"), {
      code: "EROFS",
      syscall: "open",
    });
    const after = await recordDead(inspectDispatch(dir, { clock: systemClock }), systemClock);
    const problem = after.problems.find((p) => p.file === fileIn(dir, FILES.record));
    expect(problem?.code).toBe("E_IO_WRITE");
    expect(problem?.fix).toMatch(/^free disk space/);
  });
});
