import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { periodAt } from "../../src/domain/quota/period.js";
import { claimBudgetWarning } from "../../src/quota/budgets.js";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { dispatchClaude, fakeClaude, startsIn, waitAll } from "../helpers/quota.js";
import { waitFor } from "../helpers/wait.js";

// A budget by period with real processes (specs/quota.md, "Budgets by period"): spent, it parks new work
// until the period turns, and the home's waker starts that work the next day. "The next day" comes in
// seconds: every catherd process reads the calendar CATHERD_TEST_ONLY_CALENDAR_SHIFT_MS ahead of the
// clock (specs/supervisor.md, "Test hooks"), so local midnight falls a few seconds after the test starts.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

/** How long after the start of the test the shifted calendar's day ends: room for the first dispatch. */
const DAY_ENDS_IN_MS = 10_000;

describe("a budget by period", () => {
  it("parks new work at 100 % of a day's budget, warns once, and starts it the next day", async () => {
    const { home, env: base } = isolatedHome();
    const log = path.join(tempDir(), "starts.log");
    const warned = path.join(tempDir(), "warned.log");
    const start = Date.now();
    // The shifted calendar's day ends DAY_ENDS_IN_MS from now.
    const shift = periodAt("day", start).endMs - DAY_ENDS_IN_MS - start;
    const midnight = start + DAY_ENDS_IN_MS;
    expect(periodAt("day", start, shift).endMs).toBe(midnight);
    const env = {
      ...base,
      CATHERD_CLAUDE_BIN: fakeClaude(log).bin,
      CATHERD_TEST_ONLY_CALENDAR_SHIFT_MS: String(shift),
    };
    // One recorded answer costs $0.0953: the first dispatch spends the day's budget.
    const set = await runCli(["budget", "set", "home", "--per", "day", "--usd", "0.09"], { env });
    expect(set.code, set.stdout + set.stderr).toBe(0);
    const notify = `echo "$CATHERD_STATUS $CATHERD_BUDGET_WARNING" >> ${JSON.stringify(warned)}`;
    await dispatchClaude(env, "first", dispatched, ["--notify", notify]);
    await waitAll(env, ["first"]);
    const second = await dispatchClaude(env, "second", dispatched, ["--notify", notify]);
    expect(Date.now(), "the first dispatch took the whole shifted day").toBeLessThan(midnight - 1000);
    expect(second).toMatchObject({ queued: true, blockedBy: "period-budget" });
    const queued = JSON.parse(fs.readFileSync(path.join(second.dir, "queued.json"), "utf8"));
    expect(queued.blocker).toEqual({
      scope: "home",
      period: "day",
      budget: "usd",
      limit: 0.09,
      used: 0.0953,
      until: new Date(midnight).toISOString(),
    });
    const shown = await runCli(["show", "second"], { env });
    expect(shown.stdout).toMatch(
      /queued #1: budget home\/day spent \(\$0\.0953 of \$0\.0900\), until \d{4}-\d\d-\d\d 00:00/,
    );
    const usage = await runCli(["usage"], { env });
    expect(usage.stdout).toMatch(
      /^budget home per day: \$0\.0953 of \$0\.0900 \(\$0\.0000 left\); renews \d{4}-\d\d-\d\d 00:00/,
    );
    await waitFor(
      "the budget's warning",
      () =>
        fs.existsSync(warned) && fs.readFileSync(warned, "utf8").includes("budget-warning")
          ? true
          : undefined,
      20_000,
    );
    await waitAll(env, ["second"]);
    const starts = startsIn(log);
    expect(starts.map((s) => s.name)).toEqual(["first", "second"]);
    expect(starts[1]?.at).toBeGreaterThanOrEqual(midnight);
    // Once per budget and period: the first day's warning by the first record, the next day's by the second.
    const warnings = () =>
      fs
        .readFileSync(warned, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("budget-warning"));
    await waitFor("the next day's warning", () => (warnings().length >= 2 ? true : undefined), 20_000);
    expect(warnings()).toEqual([
      "budget-warning home/day $0.0953 of $0.0900",
      "budget-warning home/day $0.0953 of $0.0900",
    ]);
    expect(fs.readdirSync(path.join(home, "budgets-warned")).sort()).toEqual(
      [periodAt("day", start, shift).key, periodAt("day", midnight, shift).key].map(
        (k) => `home-day-${k}.json`,
      ),
    );
    const report = JSON.parse((await runCli(["usage", "--json"], { env })).stdout);
    expect(report.budgets).toHaveLength(1);
    expect(report.budgets[0]).toMatchObject({
      scope: "home",
      per: "day",
      usd: 0.09,
      renews: expect.any(String),
    });
    await waitFor(
      "the waker to exit",
      () => (fs.existsSync(path.join(home, "waker.lock")) ? undefined : true),
      20_000,
    );
  }, 150_000);
});

describe("catherd budget, refused before anything is written", () => {
  it.each([
    [["set", "galaxy", "--per", "day", "--usd", "5"], /"galaxy": a scope is home, backend:<cli>/],
    [["set", "home", "--per", "year", "--usd", "5"], /--per "year": day, week or month/],
    [["set", "home", "--per", "day"], /sets no limit/],
    [["set", "home", "--per", "day", "--usd", "0"], /--usd "0": a number of US dollars above 0/],
    [["set", "tag:UP", "--per", "day", "--usd", "1"], /a scope is/],
    [["remove", "home", "--per", "day"], /there is no budget home per day/],
  ])("%j", async (args, message) => {
    const { home, env } = isolatedHome();
    const result = await runCli(["budget", ...args, "--json"], { env });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout).error.message).toMatch(message);
    expect(fs.existsSync(path.join(home, "budgets.json"))).toBe(false);
  });

  it("claims a budget's warning of a period once", () => {
    const { home } = isolatedHome();
    const budget = { scope: "tag:x", per: "week" as const, usd: 1, tokens: null, minutes: null };
    const at = new Date();
    expect([1, 2, 3].map(() => claimBudgetWarning(home, budget, "2026-12-07", at))).toEqual([
      true,
      false,
      false,
    ]);
    expect(claimBudgetWarning(home, budget, "2026-12-14", at)).toBe(true);
  });

  it("replaces a budget given again for the same scope and period, and lists each", async () => {
    const { env } = isolatedHome();
    for (const args of [
      ["set", "home", "--per", "day", "--usd", "5"],
      ["set", "home", "--per", "day", "--tokens", "2M"],
      ["set", "tag:nightly", "--per", "week", "--minutes", "600"],
    ]) {
      expect((await runCli(["budget", ...args], { env })).code).toBe(0);
    }
    const listed = JSON.parse((await runCli(["budget", "list", "--json"], { env })).stdout).budgets;
    expect(
      listed.map((b: { scope: string; per: string; usd: number | null; tokens: number | null }) => [
        b.scope,
        b.per,
        b.usd,
        b.tokens,
      ]),
    ).toEqual([
      ["home", "day", null, 2_000_000],
      ["tag:nightly", "week", null, null],
    ]);
    const refused = await runCli(
      ["dispatch", "--backend", "exec", "--tag", "Bad Tag", "--json", "--", "true"],
      { env },
    );
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout).error.message).toMatch(/--tag "Bad Tag": not a tag/);
  });
});
