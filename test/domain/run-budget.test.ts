import { describe, expect, it } from "vitest";
import {
  blockerOf,
  type Caps,
  choosePromotions,
  type Queued,
} from "../../src/domain/admission/admission-rules.js";
import {
  addDispatchSpend,
  budgetEndsAt,
  formatRunBudget,
  NO_RUN_SPEND,
  parseRunBudget,
  type RunBudget,
  type RunSpend,
  replacePart,
  runCrossing,
  sameBudget,
} from "../../src/domain/spend/run-budget.js";

const budget = (b: Partial<RunBudget>): RunBudget => ({ tokens: null, usd: null, minutes: null, ...b });
const spend = (s: Partial<RunSpend>): RunSpend => ({ ...NO_RUN_SPEND, ...s });

describe("--run-budget as written", () => {
  it.each([
    ["tokens=2M,usd=25,minutes=600", budget({ tokens: 2_000_000, usd: 25, minutes: 600 })],
    ["tokens=50k", budget({ tokens: 50_000 })],
    ["usd=0.50", budget({ usd: 0.5 })],
    ["usd=$12.5", budget({ usd: 12.5 })],
    ["minutes=1", budget({ minutes: 1 })],
    [" minutes=600 , tokens=1500 ", budget({ tokens: 1500, minutes: 600 })],
    ["none", "none"],
  ])("takes %j", (text, expected) => {
    expect(parseRunBudget(text)).toEqual(expected);
  });

  it.each([
    ["foo=1", /"foo" is not a limit: the limits are tokens=<n>, usd=<dollars> and minutes=<n>/],
    ["tokens=", /^tokens= has no value$/],
    ["tokens", /^tokens= has no value$/],
    ["usd=-2", /^usd=-2: usd is a number of US dollars above 0/],
    ["usd=NaN", /usd is a number of US dollars/],
    ["tokens=0", /tokens is a whole number of tokens from 1/],
    ["tokens=1e99", /tokens is a whole number of tokens/],
    ["minutes=0", /minutes is a whole number of minutes from 1 to 525600/],
    ["minutes=1.5", /minutes is a whole number/],
    ["minutes=525601", /minutes is a whole number/],
    ["tokens=1M,tokens=2M", /^tokens is given twice$/],
    ["", /^empty: give /],
    [",", /"" is not a limit/],
  ])("refuses %j, naming the rule", (text, rule) => {
    const parsed = parseRunBudget(text);
    expect(parsed).toEqual({ rule: expect.stringMatching(rule) });
  });

  it("writes a budget back as the flag takes it", () => {
    expect(formatRunBudget(budget({ tokens: 2_000_000, usd: 25, minutes: 600 }))).toBe(
      "tokens=2M,usd=25,minutes=600",
    );
    expect(formatRunBudget(budget({ tokens: 1500 }))).toBe("tokens=1500");
    expect(formatRunBudget(budget({ tokens: 3_000_000_000 }))).toBe("tokens=3G");
    for (const text of ["tokens=2M,usd=25,minutes=600", "tokens=1500", "usd=0.5"]) {
      const parsed = parseRunBudget(text);
      if (parsed === "none" || "rule" in parsed) throw new Error(text);
      expect(parseRunBudget(formatRunBudget(parsed))).toEqual(parsed);
    }
  });

  it("tells budgets apart by their limits", () => {
    expect(sameBudget(budget({ tokens: 1 }), budget({ tokens: 1 }))).toBe(true);
    expect(sameBudget(budget({ tokens: 1 }), budget({ tokens: 1, usd: 2 }))).toBe(false);
    expect(sameBudget(null, null)).toBe(true);
    expect(sameBudget(null, budget({ minutes: 3 }))).toBe(false);
  });
});

describe("a run's spend against its budget", () => {
  const b = budget({ tokens: 2_000_000, usd: 25, minutes: 600 });

  it("is not spent a token before its limit, and is at it", () => {
    expect(runCrossing("nightly", b, spend({ tokens: 1_999_999 }), 0)).toBeNull();
    expect(runCrossing("nightly", b, spend({ tokens: 2_000_000 }), 0)).toEqual({
      cap: "run-tokens",
      limit: 2_000_000,
      used: 2_000_000,
      message: "run nightly spent 2,000,000 tokens of --run-budget tokens=2M",
    });
  });

  it("counts dollars, then minutes, in that order", () => {
    expect(runCrossing("r", b, spend({ costUsd: 24.99 }), 0)).toBeNull();
    expect(runCrossing("r", b, spend({ costUsd: 25.5 }), 601 * 60_000)).toMatchObject({
      cap: "run-usd",
      message: "run r spent $25.50 of --run-budget usd=25 (at list prices: an estimate on a subscription)",
    });
    expect(runCrossing("r", b, spend({}), 600 * 60_000 - 1)).toBeNull();
    expect(runCrossing("r", b, spend({}), 600 * 60_000)).toMatchObject({
      cap: "run-minutes",
      limit: 600,
      message: "run r has run 10h of --run-budget minutes=600",
    });
    expect(runCrossing("r", budget({ minutes: 90 }), spend({}), 95.5 * 60_000)?.message).toBe(
      "run r has run 1h35m of --run-budget minutes=90",
    );
  });

  it("sets only the limits it has", () => {
    expect(runCrossing("r", budget({ minutes: 5 }), spend({ tokens: 1e12, costUsd: 1e6 }), 0)).toBeNull();
    expect(budgetEndsAt(budget({ minutes: 5 }), 1_000)).toBe(301_000);
    expect(budgetEndsAt(budget({ tokens: 5 }), 1_000)).toBeNull();
  });

  it("adds a dispatch's part, counting one without dollars as unpriced", () => {
    let s = addDispatchSpend(NO_RUN_SPEND, { tokens: 100, costUsd: 0.5, live: true });
    s = addDispatchSpend(s, { tokens: 40, costUsd: null, live: false });
    s = addDispatchSpend(s, { tokens: 0, costUsd: null, live: false });
    expect(s).toEqual({ tokens: 140, costUsd: 0.5, unpriced: 1, live: 1, dispatches: 3 });
  });

  it("puts a supervisor's own figures in place of its part in the sum", () => {
    const summed = spend({ tokens: 1000, costUsd: 2, unpriced: 1, live: 2, dispatches: 5 });
    expect(replacePart(summed, { tokens: 300, costUsd: null }, { tokens: 500, costUsd: 0.7 })).toEqual({
      tokens: 1200,
      costUsd: 2.7,
      unpriced: 0,
      live: 2,
      dispatches: 5,
    });
    // Not in the sum yet (its part not written, or written after the sum): added.
    expect(replacePart(summed, null, { tokens: 10, costUsd: null })).toEqual({
      tokens: 1010,
      costUsd: 2,
      unpriced: 2,
      live: 3,
      dispatches: 6,
    });
  });
});

describe("a spent budget in admission's choice", () => {
  const spent = runCrossing("r", budget({ tokens: 10 }), spend({ tokens: 12 }), 0);
  const caps: Caps = { maxParallel: null, perBackend: {}, perHost: {}, spent };
  const queued = (name: string): Queued => ({
    name,
    dispatchId: `id-${name}`,
    backend: "codex",
    owns: [],
    notBefore: null,
  });

  it("blocks a candidate before anything else, saying which limit and how much was used", () => {
    expect(
      blockerOf({ backend: "codex", owns: [], notBefore: Date.now() + 1e6 }, [], caps, Date.now()),
    ).toEqual({
      blockedBy: "budget",
      blocker: { budget: "tokens", limit: 10, used: 12 },
    });
  });

  it("promotes nothing from the queue, and everything free once it is raised", () => {
    const queue = [queued("a"), queued("b")];
    expect(choosePromotions(queue, [], caps, 0)).toEqual([]);
    expect(choosePromotions(queue, [], { ...caps, spent: null }, 0).map((c) => c.entry.name)).toEqual([
      "a",
      "b",
    ]);
  });
});
