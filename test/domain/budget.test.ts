import { describe, expect, it } from "vitest";
import {
  crossing,
  groupDigits,
  parseCostCap,
  parseTokenCap,
  remainingCaps,
} from "../../src/domain/spend/budget.js";
import {
  decide,
  initialWatch,
  nextDeadline,
  observe,
  type WatchLimits,
} from "../../src/domain/watch/watch.js";

describe("--max-tokens and --max-cost as written", () => {
  it.each([
    ["50000", 50_000],
    ["50k", 50_000],
    ["2M", 2_000_000],
    ["1.5m", 1_500_000],
    ["1G", 1_000_000_000],
    ["1", 1],
    ["1000000000000", 1_000_000_000_000],
  ])("reads --max-tokens %s as %d", (text, want) => {
    expect(parseTokenCap(text)).toBe(want);
  });

  it.each(["0", "-5", "abc", "1e99", "1.5", "", "5 k", "1000000000001", "0.0001k", "NaN", "Infinity"])(
    "refuses --max-tokens %j with its rule",
    (text) => {
      expect(parseTokenCap(text)).toMatch(/^a whole number of tokens from 1 to 1000000000000/);
    },
  );

  it.each([
    ["5", 5],
    ["0.50", 0.5],
    ["$12.5", 12.5],
    ["1000000", 1_000_000],
  ])("reads --max-cost %s as %d", (text, want) => {
    expect(parseCostCap(text)).toBe(want);
  });

  it.each(["-1", "abc", "NaN", "0", "0.00", "1e3", "1000001", "", "5 USD", "Infinity"])(
    "refuses --max-cost %j with its rule",
    (text) => {
      expect(parseCostCap(text)).toMatch(/^a number of US dollars above 0/);
    },
  );
});

it.each([
  [0, "0"],
  [999, "999"],
  [1000, "1,000"],
  [51_230, "51,230"],
  [1_000_000_000_000, "1,000,000,000,000"],
  [-40_400, "-40,400"],
])("groups the digits of %d as %s", (n, want) => {
  expect(groupDigits(n)).toBe(want);
});

describe("crossing: the first cap the spend has reached", () => {
  const caps = { maxTokens: 50_000, maxCostUsd: 5 };
  it.each([
    [{ tokens: 49_999, costUsd: 4.99, priced: false }, null],
    [{ tokens: 50_000, costUsd: 1, priced: false }, "used 50,000 tokens of --max-tokens 50000"],
    [{ tokens: 51_230, costUsd: 9, priced: false }, "used 51,230 tokens of --max-tokens 50000"],
    [{ tokens: 10, costUsd: 5, priced: false }, "used $5.00 of --max-cost 5"],
    [
      { tokens: 10, costUsd: 5.1234, priced: true },
      "used $5.12 of --max-cost 5 (catherd's estimate at list prices)",
    ],
    [{ tokens: 10, costUsd: null, priced: false }, null],
  ])("says %j → %j", (spend, message) => {
    expect(crossing(caps, spend)?.message ?? null).toBe(message);
  });

  it("names the cap, its limit and what was used", () => {
    expect(
      crossing({ maxTokens: null, maxCostUsd: 0.001 }, { tokens: 5, costUsd: 0.0069, priced: false }),
    ).toEqual({
      cap: "cost",
      limit: 0.001,
      used: 0.0069,
      message: "used $0.0069 of --max-cost 0.001",
    });
    expect(
      crossing({ maxTokens: null, maxCostUsd: null }, { tokens: 1e12, costUsd: 1e6, priced: false }),
    ).toBeNull();
  });

  it("leaves a chain's next attempt what this one's caps have left", () => {
    expect(remainingCaps(caps, { tokens: 30_000, costUsd: 1.25, priced: false })).toEqual({
      maxTokens: 20_000,
      maxCostUsd: 3.75,
    });
    expect(remainingCaps(caps, { tokens: 50_000, costUsd: 1, priced: false })).toMatch(
      /--max-tokens is spent/,
    );
    expect(remainingCaps(caps, { tokens: 1, costUsd: 6, priced: false })).toMatch(/--max-cost is spent/);
    expect(
      remainingCaps({ maxTokens: null, maxCostUsd: 2 }, { tokens: 9, costUsd: null, priced: false }),
    ).toEqual({
      maxTokens: null,
      maxCostUsd: 2,
    });
  });
});

describe("decide with a cap reached (fake clock, ms)", () => {
  const limits: WatchLimits = {
    idleMs: 1000,
    wallMs: 10_000,
    stallMs: 500,
    graceAfterFinalMs: 200,
    retryAttempts: 3,
    retryWindowMs: 3000,
  };
  const budget = crossing(
    { maxTokens: 100, maxCostUsd: null },
    { tokens: 120, costUsd: null, priced: false },
  );
  const quiet = { exited: false, cancelRequested: false };
  const at = (ms: number) => observe(initialWatch(0), { progress: true }, ms);

  it.each([
    ["stops for the cap at the poll that sees it", { ...quiet, budget }, 150, "budget"],
    ["lets an exit in the same poll win", { exited: true, cancelRequested: false, budget }, 150, "exited"],
    [
      "lets a cancel in the same poll win",
      { exited: false, cancelRequested: true, budget },
      150,
      "cancelled",
    ],
    ["wins over a wall limit due in the same poll", { ...quiet, budget }, 10_000, "budget"],
    ["keeps running without a crossing", { ...quiet, budget: null }, 150, "continue"],
  ])("%s", (_title, signals, now, verdict) => {
    const judged = decide(at(100), signals, limits, now).verdict;
    expect(judged.kind === "stop" ? judged.reason : judged.kind).toBe(verdict);
    if (verdict === "budget") expect(judged).toEqual({ kind: "stop", reason: "budget", errorKind: "budget" });
  });

  it("stops nothing once the final answer stands: the work is done, the record shows the overshoot", () => {
    const finished = observe(at(100), { progress: true, final: { isError: false, message: null } }, 120);
    expect(decide(finished, { ...quiet, budget }, limits, 150).verdict).toEqual({ kind: "continue" });
    expect(decide(finished, { ...quiet, budget }, limits, 320).verdict).toMatchObject({
      reason: "after-final",
    });
    // The CLI goes on after it (opencode continues a compacted session): the cap stops it then.
    const again = observe(finished, { progress: true, continues: true }, 130);
    expect(decide(again, { ...quiet, budget }, limits, 131).verdict).toMatchObject({ reason: "budget" });
  });

  it("moves no deadline: a cap is news from a usage report, not from the clock", () => {
    expect(nextDeadline(at(100), limits)).toBe(600);
  });
});
