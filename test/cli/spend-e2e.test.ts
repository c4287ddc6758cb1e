import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { FAKE_AGENT, ROOT, readJson, reapAll, tempDir } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForFile, waitForJson } from "../helpers/wait.js";

// Spending shown end to end through the built CLI (specs/cli.md, `status` and `usage`): real supervisors
// of fake agents (test/fixtures/fake-agent.mjs) that play two streams recorded from the real CLIs
// (test/fixtures/recorded/) and opencode steps of known usage, with --max-tokens, --max-cost and a
// --run-budget; `status` must show each dispatch's figures against its caps and the run's spend against
// its budget, and `usage` total exactly what the records say, by every grouping.

const dispatched: { dispatchId: string; dir: string; supervisorPid: number }[] = [];

afterEach(async () => {
  // A test that failed half-way leaves an agent waiting: cancel what is not recorded, let every supervisor
  // record and exit (killed past the deadline), then reap whatever is left.
  for (const d of dispatched) {
    if (!fs.existsSync(path.join(d.dir, "record.json"))) fs.writeFileSync(path.join(d.dir, "cancel"), "");
  }
  for (const d of dispatched) {
    await waitFor(
      `supervisor ${d.supervisorPid} to exit`,
      () => (isAlive(d.supervisorPid) ? undefined : true),
      30_000,
    ).catch(() => killPid(d.supervisorPid));
  }
  expect(reapAll(dispatched.splice(0).map((d) => d.dispatchId)), "processes left running").toBe(0);
});

const RECORDED = path.join(ROOT, "test/fixtures/recorded");

/** A recorded stream as fake-agent steps, one line each. */
function replay(file: string): { out: string }[] {
  return fs
    .readFileSync(path.join(RECORDED, file), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((out) => ({ out }));
}

/** An opencode step of 10,000 input and 100 output tokens that cost $0.25 by opencode's own figure. */
const OPENCODE_STEP = {
  out: '{"type":"step_finish","sessionID":"ses_dd9b0a858ffeXNS6E54rmGgtGg","part":{"id":"prt_1","reason":"tool-calls","tokens":{"input":10000,"output":100,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.25}}',
};

async function dispatch(
  env: NodeJS.ProcessEnv,
  backend: "claude-code" | "codex" | "opencode",
  name: string,
  steps: object[],
  extra: string[],
) {
  const file = path.join(tempDir(), `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ steps }));
  const result = await runCli(
    [
      "dispatch",
      "--backend",
      backend,
      "--bin",
      FAKE_AGENT,
      "--name",
      name,
      "--brief",
      "spend",
      "--json",
      "--env",
      `FAKE_AGENT_SCENARIO_FILE=${file}`,
      ...extra,
    ],
    { env, timeoutMs: 60_000 },
  );
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const d = dispatchedOf(result);
  dispatched.push(d);
  return d;
}

/** What `status --json` says of spending (specs/cli.md, `status`). */
interface StatusAnswer {
  dispatches: { name: string; state: string; spend: { tokens: number } | null }[];
  runBudget: { spend: { tokens: number } } | null;
}

/** `usage --json` (specs/cli.md, `usage`). */
interface UsageAnswer {
  since: string | null;
  groups: { key: string; tokens: number }[];
  total: { tokens: number };
}

async function json<T>(env: NodeJS.ProcessEnv, args: string[]): Promise<T> {
  const result = await runCli([...args, "--json"], { env });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as T;
}

/** `catherd <args> --json` again until `ready` says its answer is complete (the live figures arrived). */
async function jsonWhen<T>(
  env: NodeJS.ProcessEnv,
  args: string[],
  what: string,
  ready: (answer: T) => boolean,
): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await json<T>(env, args);
    if (ready(answer)) return answer;
    if (Date.now() > deadline) throw new Error(`catherd ${args.join(" ")} never showed ${what}`);
  }
}

async function text(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  const result = await runCli(args, { env });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return result.stdout;
}

/** What one dispatch of the scenario spent, from its stream: tokens in, tokens out, its own dollars. */
interface Spent {
  input: number;
  output: number;
  costUsd: number;
  /** Parts whose tokens no price covers. */
  unpriced: number;
}

const OPUS: Spent = { input: 19_000, output: 12, costUsd: 0.0953, unpriced: 0 };
const MOCK: Spent = { input: 10_079, output: 12, costUsd: 0, unpriced: 1 };
const STEPS: Spent = { input: 20_000, output: 200, costUsd: 0.5, unpriced: 0 };
const SIDE: Spent = { input: 10_000, output: 100, costUsd: 0.25, unpriced: 0 };

/** A group of `usage --json`: the sum of what its dispatches spent (nothing cached, no reasoning). */
function group(key: string, members: Spent[], live = 0) {
  const sum = (f: (s: Spent) => number) => members.reduce((n, s) => n + f(s), 0);
  return {
    key,
    dispatches: members.length,
    live,
    tokens: sum((s) => s.input + s.output),
    input: sum((s) => s.input),
    cachedInput: 0,
    cacheWrite: 0,
    output: sum((s) => s.output),
    reasoning: 0,
    costUsd: expect.closeTo(
      sum((s) => s.costUsd),
      9,
    ),
    pricedUsd: 0,
    unpriced: sum((s) => s.unpriced),
  };
}

/** record.json with its admission moved `days` back, as a dispatch admitted then would have it. */
function admittedDaysAgo(dir: string, days: number): string {
  const file = path.join(dir, "record.json");
  const record = readJson(file);
  const at = new Date(Date.parse(String(record.admittedAt)) - days * 86_400_000).toISOString();
  fs.writeFileSync(`${file}.tmp`, JSON.stringify({ ...record, admittedAt: at }));
  fs.renameSync(`${file}.tmp`, file);
  return at.slice(0, 10);
}

describe("spending through the CLI", () => {
  it("shows each dispatch's spend against its caps and the run's against its budget, and totals exactly what the records say", async () => {
    const { env } = isolatedHome();
    const go = path.join(tempDir(), "go");
    const reported = path.join(tempDir(), "reported");

    // Run nightly, with a budget none of them reaches. Claude Code's recorded stream: 19,000 input and 12
    // output tokens of claude-opus-4-8[1m], $0.0953 by its own figure.
    const opus = await dispatch(env, "claude-code", "opus", replay("claude/text.jsonl"), [
      "--run",
      "nightly",
      "--run-budget",
      "tokens=1M,usd=50",
      "--max-tokens",
      "50k",
      "--max-cost",
      "1",
    ]);
    // Codex's recorded stream: 10,079 input and 12 output tokens of mock-model, which no price covers.
    const mock = await dispatch(env, "codex", "mock", replay("codex/text.jsonl"), [
      "--run",
      "nightly",
      "--model",
      "mock-model",
      "--max-cost",
      "1",
    ]);
    // Two opencode steps, then it waits for the test: live while status and usage look.
    const steps = await dispatch(
      env,
      "opencode",
      "steps",
      [OPENCODE_STEP, OPENCODE_STEP, { touch: reported }, { waitFor: go }, { exit: 0 }],
      ["--run", "nightly", "--max-tokens", "100k", "--max-cost", "2"],
    );
    // Run other, without a budget: one step.
    const side = await dispatch(env, "opencode", "side", [OPENCODE_STEP], ["--run", "other"]);
    for (const d of [opus, mock, side]) await waitForJson(path.join(d.dir, "record.json"), 30_000);
    await waitForFile(reported, 30_000);

    // status: the live one's figures come from its activity.json, the run's from the ledger's sum; both
    // within a second or so of its report.
    const status = await jsonWhen<StatusAnswer>(
      env,
      ["status", "--run", "nightly"],
      "the live dispatch's two steps in its row and in the run's spend",
      (s) =>
        s.runBudget?.spend.tokens === 49_303 &&
        s.dispatches.find((r) => r.name === "steps")?.spend?.tokens === 20_200,
    );
    expect(status.runBudget).toEqual({
      budget: { tokens: 1_000_000, usd: 50, minutes: null },
      spend: { tokens: 49_303, costUsd: expect.closeTo(0.5953, 9), unpriced: 1, live: 1, dispatches: 3 },
      elapsedMs: expect.any(Number),
      spent: null,
      problems: [],
    });
    const rows = Object.fromEntries(status.dispatches.map((r) => [r.name, r] as const));
    expect(Object.keys(rows).sort()).toEqual(["mock", "opus", "steps"]);
    expect(rows.steps).toMatchObject({
      state: "running",
      spend: { tokens: 20_200, costUsd: 0.5, costSource: "reported", maxTokens: 100_000, maxCostUsd: 2 },
    });
    expect(rows.opus).toMatchObject({
      state: "recorded",
      spend: { tokens: 19_012, costUsd: 0.0953, costSource: "reported", maxTokens: 50_000, maxCostUsd: 1 },
    });
    expect(rows.mock).toMatchObject({
      state: "recorded",
      spend: { tokens: 10_091, costUsd: null, maxTokens: null, maxCostUsd: 1 },
    });
    const human = (await text(env, ["status", "--run", "nightly"])).split("\n");
    expect(human[0]).toBe(
      "run nightly budget (--run-budget tokens=1M,usd=50): 49k of 1.0M tokens, ≥ $0.5953 of $50.00 (1 without a dollar figure) — 1 live",
    );
    expect(human[1]).toMatch(/^ {2}NAME +ID +BACKEND +STATE +AGE +TOKENS +COST +DOING \/ RESULT$/);
    expect(human).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ {2}steps +\w{6} +opencode +running +\S+ +20k\/100k +\$0\.50\/\$2\.00 /),
        expect.stringMatching(/^\* mock +\w{6} +codex +recorded +\S+ +10k +\?\/\$1\.00 +ok$/),
        expect.stringMatching(/^\* opus +\w{6} +claude-code +recorded +\S+ +19k\/50k +\$0\.10\/\$1\.00 +ok$/),
      ]),
    );
    // usage counts the live one's spend so far.
    const liveUsage = await jsonWhen<UsageAnswer>(
      env,
      ["usage", "--run", "nightly"],
      "the live dispatch's two steps",
      (u) => u.total.tokens === 49_303,
    );
    expect(liveUsage.groups).toEqual([group("nightly", [OPUS, MOCK, STEPS], 1)]);

    fs.writeFileSync(go, "");
    expect(await waitForJson(path.join(steps.dir, "record.json"), 30_000)).toMatchObject({ status: "ok" });

    // usage by each grouping, the largest spend first (dollars, then tokens), and the whole home's total.
    const total = group("total", [OPUS, MOCK, STEPS, SIDE]);
    const byRun = await json<UsageAnswer>(env, ["usage"]);
    expect(byRun).toEqual({
      by: "run",
      since: null,
      run: null,
      groups: [group("nightly", [OPUS, MOCK, STEPS]), group("other", [SIDE])],
      total,
      unreadable: 0,
      budgets: [],
    });
    expect(await text(env, ["usage"])).toBe(
      [
        "spend in every run, by run:",
        "RUN     DISPATCHES TOKENS   INPUT    CACHED   OUTPUT   COST",
        "nightly 3          49k      49k      0        224      $0.5953+",
        "other   1          10k      10k      0        100      $0.2500",
        "total   4          59k      59k      0        324      $0.8453+",
        "+ 1 part(s) used tokens that no price covers: not in COST",
        "",
      ].join("\n"),
    );
    expect((await json<UsageAnswer>(env, ["usage", "--by", "backend"])).groups).toEqual([
      group("opencode", [STEPS, SIDE]),
      group("claude-code", [OPUS]),
      group("codex", [MOCK]),
    ]);
    expect(await text(env, ["usage", "--by", "backend"])).toBe(
      [
        "spend in every run, by backend:",
        "BACKEND     DISPATCHES TOKENS   INPUT    CACHED   OUTPUT   COST",
        "opencode    2          30k      30k      0        300      $0.7500",
        "claude-code 1          19k      19k      0        12       $0.0953",
        "codex       1          10k      10k      0        12       ?",
        "total       4          59k      59k      0        324      $0.8453+",
        "+ 1 part(s) used tokens that no price covers: not in COST",
        "",
      ].join("\n"),
    );
    expect((await json<UsageAnswer>(env, ["usage", "--by", "model"])).groups).toEqual([
      group("(unknown model)", [STEPS, SIDE]),
      group("claude-opus-4-8[1m]", [OPUS]),
      group("mock-model", [MOCK]),
    ]);
    const byName = await json<UsageAnswer>(env, ["usage", "--by", "name"]);
    expect(byName.groups).toEqual([
      group("steps", [STEPS]),
      group("side", [SIDE]),
      group("opus", [OPUS]),
      group("mock", [MOCK]),
    ]);
    expect(byName.total).toEqual(total);

    // A dispatch admitted three days ago: its own day, and left out --since 1d.
    const sideDay = admittedDaysAgo(side.dir, 3);
    const days = (await json<UsageAnswer>(env, ["usage", "--by", "day"])).groups;
    const today = days.filter((g) => g.key !== sideDay);
    expect(days[0]).toEqual(group(sideDay, [SIDE]));
    // The other three were admitted within seconds of each other: one day, or two across midnight UTC.
    expect(today.map((g) => g.key)).toEqual([...today.map((g) => g.key)].sort());
    expect(today.reduce((n, g) => n + g.tokens, 0)).toBe(49_303);
    const recent = await json<UsageAnswer>(env, ["usage", "--since", "1d"]);
    expect(recent.groups).toEqual([group("nightly", [OPUS, MOCK, STEPS])]);
    expect(Date.parse(recent.since ?? "")).toBeGreaterThan(Date.now() - 86_400_000 - 60_000);
    expect(
      (await json<UsageAnswer>(env, ["usage", "--by", "name", "--run", "other", "--since", "1d"])).groups,
    ).toEqual([]);
    expect(await text(env, ["usage", "--run", "other", "--since", "1d"])).toMatch(
      /^no dispatches spent anything in run other since \d{4}-\d\d-\d\d \d\d:\d\d UTC\n$/,
    );
  }, 120_000);
});
