import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { backendFor } from "../../../src/backends/backend-registry.js";
import { StreamDigest } from "../../../src/ui/server/stream-digest.js";
import { budgetOf, usageOf } from "../../../src/ui/server/usage-wire.js";
import { tempDir } from "../../helpers/folders.js";

// What the dashboard reads of a folder besides status's row: usage from whatever fields the files have,
// and the event stream dated by events.times, read a bite at a time.

describe("usageOf", () => {
  it("reads today's tokens and cost, and richer usage and cost source where the files have them, with the row's caps", () => {
    expect(usageOf({ tokens: { input: 10, cached: 4, output: 2 }, costUsd: 0.5 }, null, null)).toEqual({
      input: 10,
      cached: 4,
      output: 2,
      more: {},
      costUsd: 0.5,
      costSource: null,
      caps: {},
    });
    const richer = usageOf(
      {
        tokens: { input: 1, cached: 0, output: 1 },
        usage: { input: 100, cachedInput: 40, output: 7, reasoning: 3, cacheWrite: 9 },
        costUsd: 1.25,
        costSource: "priced",
      },
      null,
      { maxTokens: 5000, maxCostUsd: 2 },
    );
    expect(richer).toEqual({
      input: 100,
      cached: 40,
      output: 7,
      more: { reasoning: 3, cacheWrite: 9 },
      costUsd: 1.25,
      costSource: "priced",
      caps: { tokens: 5000, usd: 2 },
    });
  });

  it("ignores what is not a finite, non-negative number, and says nothing without a record or activity", () => {
    expect(usageOf(null, null, { maxTokens: 5000, maxCostUsd: null })).toBeNull();
    expect(
      usageOf(
        null,
        { tokens: { input: "12", cached: -1, output: Number.NaN }, costUsd: Infinity },
        { maxTokens: null, maxCostUsd: null },
      ),
    ).toEqual({ input: 0, cached: 0, output: 0, more: {}, costUsd: null, costSource: null, caps: {} });
    expect(budgetOf({ budget: { tokens: 2_000_000, usd: 25, minutes: 600, other: 1 } })).toEqual({
      tokens: 2_000_000,
      usd: 25,
      minutes: 600,
    });
    expect(budgetOf({ maxParallel: 3 })).toEqual({});
  });
});

describe("StreamDigest", () => {
  const codex = (event: Record<string, unknown>) => `${JSON.stringify(event)}\n`;

  it("dates each line by events.times, pairs tool calls, and follows the usage, reading only what was added", () => {
    const dir = tempDir();
    const events = path.join(dir, "events.jsonl");
    const times = path.join(dir, "events.times");
    const first =
      codex({ type: "thread.started", thread_id: "t-1" }) +
      codex({ type: "item.started", item: { id: "c1", type: "command_execution", command: "npm test" } });
    fs.writeFileSync(events, first);
    fs.writeFileSync(times, `${Buffer.byteLength(first)} 1000\n`);
    const digest = new StreamDigest(dir, backendFor("codex"));
    digest.update(false);
    expect(digest.lines.map((l) => [l.text, l.atMs])).toEqual([
      ["thread started", 1000],
      ["$ npm test", 1000],
    ]);
    expect(digest.toolCalls()).toEqual([
      { label: "$ npm test", openedAtMs: 1000, closed: false, closedAtMs: null },
    ]);

    const second =
      codex({
        type: "item.completed",
        item: { id: "c1", type: "command_execution", command: "npm test", exit_code: 0 },
      }) + codex({ type: "turn.completed", usage: { input_tokens: 50, output_tokens: 5 } });
    fs.appendFileSync(events, second);
    // Not dated yet: the supervisor has not written the checkpoint.
    digest.update(false);
    expect(digest.lines.at(-1)?.atMs).toBeNull();
    fs.appendFileSync(times, `${Buffer.byteLength(first + second)} 4500\n`);
    digest.update(true);
    expect(digest.toolCalls()).toEqual([
      { label: "$ npm test", openedAtMs: 1000, closed: true, closedAtMs: 4500 },
    ]);
    expect(digest.usage).toEqual([{ atMs: 4500, tokens: 55, costUsd: null }]);
    expect(digest.lines.every((l) => l.atMs !== null)).toBe(true);
  });

  it("cuts a huge line for showing, and leaves undated what events.times does not reach", () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, "events.jsonl"), `${"y".repeat(10_000)}\nplain\n`);
    const digest = new StreamDigest(dir, backendFor("exec"));
    digest.update(true);
    expect(digest.lines.map((l) => l.text)).toEqual([
      `${"y".repeat(2000)} … (8000 more characters)`,
      "plain",
    ]);
    expect(digest.lines.map((l) => l.atMs)).toEqual([null, null]);
  });
});
