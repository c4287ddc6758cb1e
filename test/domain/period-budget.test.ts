import { describe, expect, it } from "vitest";
import { blockerOf, type Caps, choosePromotions } from "../../src/domain/admission/admission-rules.js";
import { periodAt } from "../../src/domain/quota/period.js";
import {
  accountsFree,
  type BudgetStanding,
  heldBy,
  type PeriodBudget,
  type PeriodEntry,
  parseScope,
  scopeKey,
  standings,
} from "../../src/domain/quota/period-budget.js";

// Budgets by period (specs/quota.md, "Budgets by period"): the scopes, the sum of a period, the 80 %
// warning, and what a spent budget holds. Times come from periodAt itself, so the table holds in any TZ.

const NOW = Date.parse("2026-12-06T12:00:00Z");
const today = periodAt("day", NOW);

const budget = (scope: string, limits: Partial<PeriodBudget> = {}): PeriodBudget => ({
  scope,
  per: "day",
  usd: null,
  tokens: null,
  minutes: null,
  ...limits,
});

const entry = (over: Partial<PeriodEntry> = {}): PeriodEntry => ({
  backend: "claude-code",
  account: "default",
  tags: [],
  atMs: today.startMs + 60_000,
  usd: 1,
  tokens: 1000,
  minutes: 2,
  ...over,
});

describe("parseScope", () => {
  it.each([
    ["home", { kind: "home" }],
    ["backend:codex", { kind: "backend", backend: "codex" }],
    ["account:claude-code/work.2", { kind: "account", backend: "claude-code", account: "work.2" }],
    ["tag:nightly", { kind: "tag", tag: "nightly" }],
  ])("takes %s", (text, scope) => {
    expect(parseScope(text)).toEqual(scope);
  });

  it.each([
    "",
    "Home",
    "backend:exec",
    "backend:nope",
    "account:codex",
    "account:codex/a/b",
    "account:codex/..x",
    "tag:",
    "tag:Upper",
    `tag:${"a".repeat(41)}`,
    "tag:a b",
  ])("refuses %j with the rule", (text) => {
    expect(parseScope(text)).toMatchObject({ rule: expect.stringContaining("a scope is home") });
  });

  it("gives each scope a file name of its own", () => {
    expect(["home", "backend:codex", "account:codex/work", "tag:x"].map(scopeKey)).toEqual([
      "home",
      "backend~codex",
      "account~codex~work",
      "tag~x",
    ]);
  });
});

describe("standings: what a period used, spent at 100 %, warned at 80 %", () => {
  it.each<[string, PeriodBudget, PeriodEntry[], { usd: number; tokens: number }, string | null, string[]]>([
    ["nothing spent", budget("home", { usd: 5 }), [], { usd: 0, tokens: 0 }, null, []],
    [
      "79 % warns not",
      budget("home", { usd: 5 }),
      [entry({ usd: 3.95 })],
      { usd: 3.95, tokens: 1000 },
      null,
      [],
    ],
    ["80 % warns", budget("home", { usd: 5 }), [entry({ usd: 4 })], { usd: 4, tokens: 1000 }, null, ["usd"]],
    [
      "100 % is spent",
      budget("home", { usd: 5 }),
      [entry({ usd: 2 }), entry({ usd: 3 })],
      { usd: 5, tokens: 2000 },
      "usd",
      ["usd"],
    ],
    [
      "yesterday's spend is not today's",
      budget("home", { usd: 5 }),
      [entry({ usd: 9, atMs: today.startMs - 1 })],
      { usd: 0, tokens: 0 },
      null,
      [],
    ],
    [
      "the first of the limits reached, in the order usd, tokens, minutes",
      budget("home", { usd: 50, tokens: 1000, minutes: 1 }),
      [entry()],
      { usd: 1, tokens: 1000 },
      "tokens",
      ["tokens", "minutes"],
    ],
    [
      "a CLI's budget counts that CLI's dispatches only",
      budget("backend:codex", { tokens: 1500 }),
      [entry({ backend: "codex" }), entry()],
      { usd: 1, tokens: 1000 },
      null,
      [],
    ],
    [
      "an account's budget counts that account of that CLI only",
      budget("account:claude-code/work", { usd: 1 }),
      [entry({ account: "work" }), entry(), entry({ backend: "codex", account: "work" })],
      { usd: 1, tokens: 1000 },
      "usd",
      ["usd"],
    ],
    [
      "a tag's budget counts the dispatches given the tag",
      budget("tag:nightly", { usd: 10 }),
      [entry({ tags: ["nightly", "x"], usd: 8 }), entry({ usd: 5 })],
      { usd: 8, tokens: 1000 },
      null,
      ["usd"],
    ],
  ])("%s", (_title, b, entries, use, spent, warned) => {
    const [s] = standings([b], entries, NOW);
    expect({ usd: s?.use.usd, tokens: s?.use.tokens }).toEqual(use);
    expect(s?.spent?.measure ?? null).toBe(spent);
    expect(s?.warned).toEqual(warned);
    expect(s?.span).toEqual(today);
  });
});

describe("what a spent budget holds", () => {
  const spentOf = (...budgets: PeriodBudget[]): BudgetStanding[] =>
    standings(
      budgets,
      [entry({ usd: 100, tokens: 1e9, minutes: 1e5, account: "work", tags: ["t"] })],
      NOW,
    ).filter((s) => s.spent !== null);
  const work = budget("account:claude-code/work", { usd: 1 });
  const other = budget("account:claude-code/other", { usd: 1 });

  it("the home's holds every dispatch; a CLI's only its own", () => {
    const home = spentOf(budget("home", { usd: 1 }));
    expect(heldBy(home, { backend: "exec", tags: [], pool: null })?.budget.scope).toBe("home");
    const codex = standings([budget("backend:codex", { usd: 1 })], [entry({ backend: "codex" })], NOW);
    expect(heldBy(codex, { backend: "codex", tags: [], pool: ["default"] })?.budget.scope).toBe(
      "backend:codex",
    );
    expect(heldBy(codex, { backend: "claude-code", tags: [], pool: ["default"] })).toBeNull();
  });

  it("a tag's holds the dispatches given that tag", () => {
    const spent = spentOf(budget("tag:t", { usd: 1 }));
    expect(heldBy(spent, { backend: "codex", tags: ["t"], pool: null })?.budget.scope).toBe("tag:t");
    expect(heldBy(spent, { backend: "codex", tags: ["u"], pool: null })).toBeNull();
  });

  it("an account's holds a pool only when every account of it is spent, and is not picked", () => {
    const spent = spentOf(work, other);
    expect(spent).toHaveLength(1);
    const both = [...spent, ...standings([other], [entry({ usd: 1, account: "other" })], NOW)];
    expect(heldBy(spent, { backend: "claude-code", tags: [], pool: ["work", "other"] })).toBeNull();
    expect(heldBy(spent, { backend: "claude-code", tags: [], pool: ["work"] })?.budget.scope).toBe(
      work.scope,
    );
    expect(heldBy(both, { backend: "claude-code", tags: [], pool: ["work", "other"] })?.budget.scope).toBe(
      work.scope,
    );
    expect(accountsFree(spent, "claude-code", ["work", "other", "default"])).toEqual(["other", "default"]);
  });

  it("blockerOf parks a dispatch it holds until the period ends, and promotion starts none of them", () => {
    const caps: Caps = {
      maxParallel: null,
      perBackend: {},
      perHost: {},
      spent: null,
      periods: spentOf(budget("tag:t", { usd: 1 })),
    };
    const ask = { backend: "codex" as const, owns: [], notBefore: null, tags: ["t"] };
    expect(blockerOf(ask, [], caps, NOW)).toEqual({
      blockedBy: "period-budget",
      blocker: {
        scope: "tag:t",
        period: "day",
        budget: "usd",
        limit: 1,
        used: 100,
        until: new Date(today.endMs).toISOString(),
      },
    });
    expect(blockerOf({ ...ask, tags: [] }, [], caps, NOW)).toBeNull();
    const q = { ...ask, name: "q", dispatchId: "id-q" };
    expect(
      choosePromotions([q, { ...q, name: "free", tags: [] }], [], caps, NOW).map((c) => c.entry.name),
    ).toEqual(["free"]);
  });

  it("a pool's pick skips the accounts whose budget is spent", () => {
    const caps: Caps = {
      maxParallel: null,
      perBackend: {},
      perHost: {},
      spent: null,
      periods: spentOf(work),
    };
    const ask = {
      backend: "claude-code" as const,
      owns: [],
      notBefore: null,
      accounts: { pool: ["work", "default"], headroomPercent: 95 },
      name: "q",
      dispatchId: "id-q",
    };
    expect(choosePromotions([ask], [], caps, NOW).map((c) => c.account)).toEqual(["default"]);
  });
});
