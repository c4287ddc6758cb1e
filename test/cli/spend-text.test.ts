import { describe, expect, it } from "vitest";
import { spendLines, spendWords } from "../../src/cli/spend-text.js";
import type { RecordFile } from "../../src/domain/schemas.js";

// How usage and cost read for people: tokens, the dollars with their source, and "estimate" wherever
// dollars are catherd's price or a subscriber's list-price equivalent.

function record(overrides: Partial<RecordFile>): RecordFile {
  return {
    schema: 1,
    dispatchId: "20261129T081530Z-k3x9qa",
    run: "default",
    name: "fix-tests",
    backend: "claude-code",
    model: null,
    status: "ok",
    reason: "exited",
    exitCode: 0,
    signal: null,
    startedAt: "2026-11-29T08:15:30.000Z",
    endedAt: "2026-11-29T08:16:12.000Z",
    secs: 42,
    thread: null,
    tokens: { input: 20_000, cached: 5000, output: 300 },
    costUsd: 0.0137,
    costSource: "reported",
    pricedBy: null,
    usage: {
      input: 20_000,
      cachedInput: 5000,
      cacheWrite: 100,
      output: 300,
      reasoning: 20,
      models: [
        {
          model: "claude-sonnet-4-5",
          input: 20_000,
          cachedInput: 5000,
          cacheWrite: 100,
          output: 300,
          reasoning: 20,
          costUsd: 0.0137,
          costSource: "reported",
        },
      ],
    },
    reply: null,
    replyPath: null,
    changedFiles: null,
    error: null,
    ...overrides,
  };
}

describe("usage and cost for people", () => {
  it("says the CLI's own figure as its, and catherd's price as an estimate", () => {
    expect(spendWords(record({}))).toBe(" 20k tokens $0.0137 (claude-code's figure)");
    expect(spendWords(record({ costUsd: 1.5, costSource: "priced", backend: "codex" }))).toBe(
      " 20k tokens ~$1.50 (estimate)",
    );
    expect(spendWords(record({ costUsd: null, costSource: null }))).toBe(" 20k tokens");
  });

  it("spells the usage out, names the cost's source and says it is an estimate for subscribers", () => {
    expect(spendLines(record({}), { cmd: "claude", maxTokens: 50_000, maxCostUsd: null } as never)).toEqual([
      "usage: 20,300 tokens — input 20,000 (cached 5,000, cache writes 100), output 300 (reasoning 20)",
      "cost: $0.0137, claude-code's own figure (an estimate if you pay by subscription)",
      "cap: --max-tokens 50000, used 20,300",
    ]);
    const priced = spendLines(
      record({ costSource: "priced", costUsd: 2, pricedBy: "@pydantic/genai-prices 0.1.8" }),
      null,
    );
    expect(priced[1]).toBe(
      "cost: ~$2.00, catherd's estimate at list prices, @pydantic/genai-prices 0.1.8 (an estimate if you pay by subscription)",
    );
  });

  it("says a cost is unknown rather than showing none for tokens used", () => {
    expect(spendLines(record({ costUsd: null, costSource: null }), null)[1]).toBe(
      "cost: unknown (no figure from the CLI, and no known price for its model)",
    );
  });

  it("reads a record written before usage was (schema 1's tokens only)", () => {
    const { usage: _u, costSource: _s, pricedBy: _p, ...old } = record({});
    expect(spendLines(old as RecordFile, null)[0]).toBe(
      "usage: 20,300 tokens (input 20000, cached 5000, output 300)",
    );
  });
});
