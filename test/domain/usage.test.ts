import { describe, expect, it } from "vitest";
import {
  accounts,
  addUsage,
  costField,
  costOf,
  countsOf,
  emptyTally,
  type ModelUse,
  needsPrice,
  type TokenCounts,
  tokenField,
  totalOf,
  type UsageReport,
  ZERO_COUNTS,
} from "../../src/domain/spend/usage.js";

const counts = (c: Partial<TokenCounts>): TokenCounts => ({ ...ZERO_COUNTS, ...c });
const use = (
  tokens: Partial<TokenCounts>,
  model: string | null = null,
  costUsd: number | null = null,
): ModelUse => ({
  model,
  tokens: counts(tokens),
  costUsd,
});
const report = (scope: UsageReport["scope"], uses: ModelUse[], key: string | null = null): UsageReport => ({
  scope,
  key,
  uses,
});

/** Folds reports in order; returns the standing total and what was ignored. */
function fold(reports: UsageReport[]) {
  const tally = emptyTally();
  const ignored = reports.map((r) => addUsage(tally, r)).filter((w) => w !== null);
  return { tally, total: totalOf(accounts(tally)), ignored };
}

describe("a usage field as a CLI printed it", () => {
  it.each([
    [12, 12],
    [0, 0],
    [undefined, 0],
    [null, 0],
    [-5, "x is negative (-5)"],
    [Number.NaN, "x is NaN"],
    [Number.POSITIVE_INFINITY, "x is Infinity"],
    [3.5, "x is not a whole number (3.5)"],
    [1e99, "x is absurdly large (1e+99)"],
    ["12", "x is a string, not a number"],
    [{}, "x is a object, not a number"],
    [true, "x is a boolean, not a number"],
  ])("reads %j as %j", (value, want) => {
    expect(tokenField(value, "x")).toEqual(want);
  });

  it.each([
    [0.25, { usd: 0.25 }],
    [undefined, { usd: null }],
    [-1, "cost is not a plausible cost (-1)"],
    [1e9, "cost is not a plausible cost (1000000000)"],
    ["0.1", "cost is a string, not a number"],
  ])("reads the cost %j as %j", (value, want) => {
    expect(costField(value, "cost")).toEqual(want);
  });

  it("refuses parts larger than their whole: cached input over input, reasoning over output", () => {
    expect(countsOf({ input: 10, cachedInput: 8, cacheWrite: 3, output: 0, reasoning: 0 })).toMatch(
      /exceed input/,
    );
    expect(countsOf({ input: 10, cachedInput: 0, cacheWrite: 0, output: 4, reasoning: 5 })).toMatch(
      /exceeds output/,
    );
    expect(countsOf({ input: 10, cachedInput: 5, cacheWrite: 5, output: 4, reasoning: 4 })).toEqual({
      input: 10,
      cachedInput: 5,
      cacheWrite: 5,
      output: 4,
      reasoning: 4,
    });
  });
});

describe("the tally of a dispatch's usage reports", () => {
  it("sums add reports, by model", () => {
    const { tally, total } = fold([
      report("add", [use({ input: 10, output: 1 })]),
      report("add", [use({ input: 20, output: 2 }, "m2")]),
      report("add", [use({ input: 5 })]),
    ]);
    expect(total).toEqual(counts({ input: 35, output: 3 }));
    expect(accounts(tally).map((a) => [a.model, a.tokens.input])).toEqual([
      [null, 15],
      ["m2", 20],
    ]);
  });

  it("counts a message once per key, its larger repeat in place of the smaller one", () => {
    const { total, ignored } = fold([
      report("message", [use({ input: 100, output: 1 })], "a"),
      report("message", [use({ input: 100, output: 1 })], "a"),
      report("message", [use({ input: 100, output: 9 })], "a"),
      report("message", [use({ input: 50, output: 1 })], "b"),
    ]);
    expect(total).toEqual(counts({ input: 150, output: 10 }));
    expect(ignored).toEqual([]);
  });

  it("ignores a message reported again with less, and says so", () => {
    const { total, ignored } = fold([
      report("message", [use({ input: 100, output: 9 })], "a"),
      report("message", [use({ input: 100, output: 3 })], "a"),
    ]);
    expect(total).toEqual(counts({ input: 100, output: 9 }));
    expect(ignored).toEqual(["message a reported again with less"]);
  });

  it("lets a run total replace what was counted live, and keeps it over later messages", () => {
    const { total } = fold([
      report("message", [use({ input: 100, output: 1 })], "a"),
      report("run", [use({ input: 300, output: 40 }, "m", 0.5)]),
      report("message", [use({ input: 900, output: 1 })], "b"),
    ]);
    expect(total).toEqual(counts({ input: 300, output: 40 }));
  });

  it("ignores a run total lower than what was counted before it: totals never decrease", () => {
    const { total, ignored } = fold([
      report("message", [use({ input: 100, output: 5 })], "a"),
      report("run", [use({ input: 90, output: 50 })]),
      report("run", [use({ input: 200, output: 50 }, null, 1)]),
      report("run", [use({ input: 200, output: 50 }, null, 0.5)]),
    ]);
    expect(total).toEqual(counts({ input: 200, output: 50 }));
    expect(ignored).toEqual([
      "a run total lower than what was counted before it",
      "a run total lower than what was counted before it",
    ]);
  });

  it("counts a thread's total only when nothing finer was, and never a lower one", () => {
    const alone = fold([report("thread", [use({ input: 4800 })]), report("thread", [use({ input: 2400 })])]);
    expect(alone.total).toEqual(counts({ input: 4800 }));
    expect(alone.ignored).toEqual(["a thread total lower than the one before it"]);
    // A resumed codex thread: the rollout's per-response reports of this run stand, whatever order they come in.
    const finer = fold([
      report("thread", [use({ input: 4800 })]),
      report("message", [use({ input: 2400 })], "r1"),
    ]);
    expect(finer.total).toEqual(counts({ input: 2400 }));
  });

  it("keeps the CLI's dollars apart from the tokens it gave none for", () => {
    const { tally } = fold([
      report("add", [use({ input: 10 }, null, 0.25)]),
      report("add", [use({ input: 20 })]),
      report("add", [use({ input: 5 }, null, 0.25)]),
    ]);
    expect(accounts(tally)).toEqual([
      { model: null, tokens: counts({ input: 35 }), reportedUsd: 0.5, unreported: counts({ input: 20 }) },
    ]);
    expect(needsPrice(accounts(tally))).toBe(true);
  });
});

describe("the cost of a dispatch's accounts", () => {
  const price = (model: string | null, tokens: TokenCounts) =>
    model === "known" ? tokens.input * 0.001 + tokens.output * 0.01 : null;

  it("is the CLI's own figure when it covers every token", () => {
    const { tally } = fold([report("run", [use({ input: 100, output: 10 }, "unknown", 1.5)])]);
    expect(costOf(accounts(tally), price)).toEqual({ usd: 1.5, source: "reported" });
  });

  it("is catherd's price where the CLI gave none, and says so", () => {
    const { tally } = fold([
      report("add", [use({ input: 100 }, "known", 0.5)]),
      report("add", [use({ input: 1000, output: 10 }, "known")]),
    ]);
    const cost = costOf(accounts(tally), price);
    expect(cost.source).toBe("priced");
    expect(cost.usd).toBeCloseTo(0.5 + 1 + 0.1, 10);
  });

  it("is unknown, not a guess, when some tokens have no known price", () => {
    const { tally } = fold([
      report("add", [use({ input: 100 }, "known")]),
      report("add", [use({ input: 100 }, "unknown")]),
    ]);
    expect(costOf(accounts(tally), price)).toEqual({ usd: null, source: null });
  });

  it("is none when nothing was used and nothing reported; the CLI's $0 is a figure", () => {
    expect(costOf(accounts(emptyTally()), price)).toEqual({ usd: null, source: null });
    const { tally } = fold([report("run", [use({}, null, 0)])]);
    expect(costOf(accounts(tally), price)).toEqual({ usd: 0, source: "reported" });
  });
});
