import { describe, expect, it } from "vitest";
import { type EntryModel, type UsageEntry, usageTotals } from "../../src/domain/spend/usage-totals.js";

const model = (
  name: string | null,
  input: number,
  output: number,
  costUsd: number | null,
  priced = false,
): EntryModel => ({
  model: name,
  input,
  cachedInput: Math.floor(input / 2),
  cacheWrite: 0,
  output,
  reasoning: 0,
  costUsd,
  priced,
});
const entry = (over: Partial<UsageEntry>): UsageEntry => ({
  run: "nightly",
  name: "fix",
  backend: "codex",
  account: "default",
  at: "2026-11-30T10:00:00.000Z",
  live: false,
  models: [],
  ...over,
});

const ENTRIES: UsageEntry[] = [
  entry({ models: [model("gpt-5", 1000, 100, 0.5, true)] }),
  entry({
    backend: "claude-code",
    name: "docs",
    at: "2026-12-01T09:00:00.000Z",
    models: [model("claude-sonnet-4", 2000, 200, 1.25), model("claude-haiku", 500, 50, 0.05)],
  }),
  entry({
    run: "adhoc",
    backend: "gemini",
    at: "2026-12-01T11:00:00.000Z",
    live: true,
    models: [model(null, 300, 30, null)],
  }),
];

describe("usage totals", () => {
  it("sums by backend, the largest spend first, and counts a live one and tokens without a price", () => {
    const { groups, total } = usageTotals(ENTRIES, "backend", null);
    expect(groups.map((g) => [g.key, g.dispatches, g.tokens, g.costUsd])).toEqual([
      ["claude-code", 1, 2750, 1.3],
      ["codex", 1, 1100, 0.5],
      ["gemini", 1, 330, 0],
    ]);
    expect(groups[2]).toMatchObject({ live: 1, unpriced: 1 });
    expect(total).toMatchObject({
      key: "total",
      dispatches: 3,
      live: 1,
      tokens: 4180,
      costUsd: 1.8,
      pricedUsd: 0.5,
      unpriced: 1,
    });
    expect(total.cachedInput).toBe(500 + 1000 + 250 + 150);
  });

  it("counts a dispatch once in each of its models, and names a model nobody named", () => {
    const { groups, total } = usageTotals(ENTRIES, "model", null);
    expect(groups.map((g) => [g.key, g.dispatches, g.tokens])).toEqual([
      ["claude-sonnet-4", 1, 2200],
      ["gpt-5", 1, 1100],
      ["claude-haiku", 1, 550],
      ["(unknown model)", 1, 330],
    ]);
    expect(total.dispatches).toBe(3);
  });

  it("groups by run, by name and by day (days in order), and leaves out what came before --since", () => {
    expect(usageTotals(ENTRIES, "run", null).groups.map((g) => g.key)).toEqual(["nightly", "adhoc"]);
    expect(usageTotals(ENTRIES, "name", null).groups.map((g) => [g.key, g.dispatches])).toEqual([
      ["docs", 1],
      ["fix", 2],
    ]);
    expect(usageTotals(ENTRIES, "day", null).groups.map((g) => [g.key, g.dispatches])).toEqual([
      ["2026-11-30", 1],
      ["2026-12-01", 2],
    ]);
    const since = usageTotals(ENTRIES, "run", Date.parse("2026-12-01T00:00:00Z"));
    expect(since.total.dispatches).toBe(2);
    expect(usageTotals(ENTRIES, "run", Date.parse("2027-01-01T00:00:00Z")).groups).toEqual([]);
  });
});
