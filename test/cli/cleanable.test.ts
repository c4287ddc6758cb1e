import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { renderClean } from "../../src/cli/clean-command.js";
import { bytes } from "../../src/cli/render.js";
import { cleanableNote } from "../../src/cli/status-command.js";
import { cleanableBytes } from "../../src/dispatch/read/cleanable.js";
import { CLEANABLE_NOTE_BYTES, DEFAULT_CLEAN_AGE_MS } from "../../src/domain/clean-rule.js";
import { tempDir } from "../helpers/folders.js";

const DAY = 86_400_000;
const NOW = Date.parse("2026-12-01T00:00:00Z");
/** A recorded dispatch folder that ended `daysAgo`, whose record says its worktree held `worktreeBytes`. */
function recordedFolder(daysAgo: number, worktree: { path: string; bytes: number } | null) {
  const dir = tempDir("catherd-cleanable-");
  const endedAt = new Date(NOW - daysAgo * DAY).toISOString();
  const record = {
    schema: 1,
    dispatchId: path.basename(dir),
    run: "default",
    name: "n",
    backend: "exec",
    model: null,
    status: "ok",
    reason: "exited",
    exitCode: 0,
    signal: null,
    startedAt: endedAt,
    endedAt,
    secs: 1,
    thread: null,
    tokens: { input: 0, cached: 0, output: 0 },
    costUsd: null,
    reply: null,
    replyPath: null,
    changedFiles: [],
    error: null,
    worktree: worktree === null ? null : { ...worktree, branch: "catherd/n-abc123", base: "b", head: "h" },
  };
  fs.writeFileSync(path.join(dir, "record.json"), JSON.stringify(record));
  fs.writeFileSync(path.join(dir, "events.jsonl"), Buffer.alloc(5000));
  return { dir, state: "recorded", endedAt };
}

describe("what status says clean could free", () => {
  it("counts recorded folders older than clean's age, with their worktrees as recorded, and only those", () => {
    const worktree = tempDir("catherd-wt-");
    const old = recordedFolder(8, { path: worktree, bytes: 2 * CLEANABLE_NOTE_BYTES });
    const gone = recordedFolder(9, {
      path: path.join(worktree, "removed-since"),
      bytes: 10 * CLEANABLE_NOTE_BYTES,
    });
    const young = recordedFolder(6, { path: worktree, bytes: 5 * CLEANABLE_NOTE_BYTES });
    const live = { ...recordedFolder(30, null), state: "running" };
    const own = (row: { dir: string }) => fs.statSync(path.join(row.dir, "record.json")).size + 5000;
    expect(cleanableBytes([old, gone, young, live], NOW, DEFAULT_CLEAN_AGE_MS)).toBe(
      own(old) + 2 * CLEANABLE_NOTE_BYTES + own(gone),
    );
  });

  it("says so only above 1 GiB, with the command that frees it", () => {
    expect(cleanableNote("r", CLEANABLE_NOTE_BYTES)).toBe("");
    expect(cleanableNote("r", 3 * CLEANABLE_NOTE_BYTES)).toBe(
      "run r: 3.0 GiB in dispatches recorded over 7d ago; free it with catherd clean --run r (--dry-run first)\n",
    );
  });
});

describe("clean's report for people", () => {
  it("names what it removed with the bytes, what it kept and why, and the total", () => {
    const text = renderClean({
      dryRun: true,
      olderThanMs: DEFAULT_CLEAN_AGE_MS,
      removed: [
        {
          run: "r",
          name: "a",
          dispatchId: "20261129T081530Z-k3x9qa",
          dir: "/d",
          bytes: 1536,
          worktree: { path: "/w", branch: "catherd/a-k3x9qa" },
        },
      ],
      kept: [
        {
          run: "r",
          name: "b",
          dispatchId: "20261129T081531Z-aaaaaa",
          dir: "/e",
          why: "uncommitted changes in its worktree",
          worktree: null,
        },
      ],
      freedBytes: 1536,
      cgroupsRemoved: [],
    });
    expect(text).toBe(
      [
        "would remove r/a/20261129T081530Z-k3x9qa and worktree (branch catherd/a-k3x9qa kept): 1.5 KiB",
        "kept r/b/20261129T081531Z-aaaaaa: uncommitted changes in its worktree",
        "would free 1.5 KiB (1 dispatch); kept 1",
        "",
      ].join("\n"),
    );
    expect([bytes(0), bytes(1023), bytes(1024), bytes(5 * 1024 ** 3)]).toEqual([
      "0 B",
      "1023 B",
      "1.0 KiB",
      "5.0 GiB",
    ]);
  });
});
