import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findByDispatchVariable } from "../../src/infra/sweep.js";
import { dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { FAKE_AGENT, fakeAgentFolder, readJson, reapAll, supervise, tempDir } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// --max-tokens and --max-cost end to end: a fake agent (test/fixtures/fake-agent.mjs) whose usage rises
// report by report, dispatched through the built CLI; its supervisor must stop it within one report of
// the crossing, record kind budget, and leave nothing running.

const dispatched: string[] = [];
const supervisors: number[] = [];

afterEach(() => {
  for (const pid of supervisors.splice(0)) killPid(pid);
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

/** A report every second: time enough, even on a loaded machine, for the stop to come before the next. */
const EVERY_MS = 1000;

/** An opencode step of 10,000 input and 100 output tokens, with an optional cost of its own. */
const openStep = (cost: string) =>
  `{"type":"step_finish","sessionID":"ses_dd9b0a858ffeXNS6E54rmGgtGg","part":{"id":"prt_{n}","reason":"tool-calls","tokens":{"input":10000,"output":100,"reasoning":0,"cache":{"read":0,"write":0}},"cost":${cost}}}`;

/** A Claude message of 100,000 input tokens (half from the cache) on a model the price table knows. */
const claudeMessage =
  '{"type":"assistant","message":{"id":"msg_{n}","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t{n}","name":"Bash","input":{"command":"make"}}],"usage":{"input_tokens":50000,"cache_read_input_tokens":50000,"cache_creation_input_tokens":0,"output_tokens":100}},"parent_tool_use_id":null,"session_id":"016b7acb-4ab6-4408-8dff-07fb28bbfee3"}';

async function dispatchRising(backend: "opencode" | "claude-code", line: string, caps: string[]) {
  const { env } = isolatedHome();
  const scenario = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(
    scenario,
    JSON.stringify({ steps: [{ repeat: { times: 60, everyMs: EVERY_MS, step: { out: line } } }] }),
  );
  const result = await runCli(
    ["dispatch", "--backend", backend, "--bin", FAKE_AGENT, "--brief", "spend", "--json", ...caps],
    { env: { ...env, FAKE_AGENT_SCENARIO_FILE: scenario } },
  );
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const d = dispatchedOf(result);
  dispatched.push(d.dispatchId);
  supervisors.push(d.supervisorPid);
  return { ...d, env };
}

/** The usage reports the agent printed: the crossing one and at most one more. */
function reportsPrinted(dir: string): number {
  return fs
    .readFileSync(path.join(dir, "events.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.includes('"usage"') || l.includes('"step_finish"')).length;
}

async function expectStopped(d: { dir: string; dispatchId: string; supervisorPid: number }) {
  const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
  const exit = readJson(path.join(d.dir, "exit.json"));
  const proc = readJson(path.join(d.dir, "proc.json")) as { pid: number };
  await waitFor(
    "the supervisor to exit after the record",
    () => (isAlive(d.supervisorPid) ? undefined : true),
    10_000,
  );
  expect(isAlive(proc.pid)).toBe(false);
  expect(findByDispatchVariable(d.dispatchId)).toEqual([]);
  expect(exit).toMatchObject({ reason: "budget", kind: "budget", stop: { term: true } });
  return { record, exit };
}

describe("a dispatch's caps on spending", () => {
  it("stops an agent whose tokens rise past --max-tokens within one report, kind budget", async () => {
    const d = await dispatchRising("opencode", openStep("0"), ["--max-tokens", "35000"]);
    const { record, exit } = await expectStopped(d);
    expect(record).toMatchObject({
      status: "limit",
      reason: "budget",
      error: { code: "budget", kind: "budget", message: "used 40,400 tokens of --max-tokens 35000" },
      tokens: { input: 40_000, output: 400 },
    });
    expect(exit.error).toEqual({ code: "budget", message: "used 40,400 tokens of --max-tokens 35000" });
    expect(reportsPrinted(d.dir)).toBeLessThanOrEqual(5);
    expect(readJson(path.join(d.dir, "spec.json"))).toMatchObject({ maxTokens: 35_000, maxCostUsd: null });
  });

  it("holds a hand-written folder to the caps its spec.json names (catherd supervise)", async () => {
    const { dir, id } = fakeAgentFolder(
      { steps: [{ repeat: { times: 60, everyMs: EVERY_MS, step: { out: openStep("0") } } }] },
      { backend: "opencode", maxTokens: 25_000 },
    );
    dispatched.push(id);
    expect((await supervise(dir, 60_000)).code).toBe(0);
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({
      status: "limit",
      reason: "budget",
      error: { kind: "budget", message: "used 30,300 tokens of --max-tokens 25000" },
    });
    expect(reportsPrinted(dir)).toBeLessThanOrEqual(4);
  });

  it("stops an agent whose own dollars rise past --max-cost within one report", async () => {
    const d = await dispatchRising("opencode", openStep("0.3"), ["--max-cost", "1"]);
    const { record } = await expectStopped(d);
    expect(record).toMatchObject({
      status: "limit",
      error: { kind: "budget", message: "used $1.20 of --max-cost 1" },
      costSource: "reported",
    });
    expect(record.costUsd).toBeCloseTo(1.2, 9);
    expect(reportsPrinted(d.dir)).toBeLessThanOrEqual(5);
  });

  it("prices a CLI's tokens while it runs to stop it at --max-cost before its own figure comes", async () => {
    const d = await dispatchRising("claude-code", claudeMessage, ["--max-cost", "0.5"]);
    const { record } = await expectStopped(d);
    // 50,000 uncached input at $3/M, 50,000 cache reads at $0.30/M and 100 output at $15/M: $0.1665 each.
    expect(record).toMatchObject({
      status: "limit",
      error: {
        kind: "budget",
        message: "used $0.6660 of --max-cost 0.5 (catherd's estimate at list prices)",
      },
      costSource: "priced",
      pricedBy: expect.stringMatching(/^@pydantic\/genai-prices /),
      usage: {
        input: 400_000,
        cachedInput: 200_000,
        models: [expect.objectContaining({ model: "claude-sonnet-4-5" })],
      },
    });
    expect(reportsPrinted(d.dir)).toBeLessThanOrEqual(5);
    // Claude was given its own budget too.
    expect(readJson(path.join(d.dir, "spec.json")).args).toEqual(
      expect.arrayContaining(["--max-budget-usd", "0.5"]),
    );
  });

  it("marks a cap crossed by the usage a CLI reports with its final answer, and leaves the record ok", async () => {
    const { env } = isolatedHome();
    const codex = (event: Record<string, unknown>) => ({ out: JSON.stringify(event) });
    const scenario = path.join(tempDir(), "scenario.json");
    fs.writeFileSync(
      scenario,
      JSON.stringify({
        steps: [
          codex({ type: "thread.started", thread_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" }),
          codex({ type: "turn.started" }),
          codex({ type: "item.completed", item: { id: "m", type: "agent_message", text: "done" } }),
          codex({ type: "turn.completed", usage: { input_tokens: 60_000, output_tokens: 500 } }),
          { exit: 0 },
        ],
      }),
    );
    const result = await runCli(
      [
        "dispatch",
        "--backend",
        "codex",
        "--bin",
        FAKE_AGENT,
        "--brief",
        "spend",
        "--json",
        "--max-tokens",
        "50k",
      ],
      { env: { ...env, FAKE_AGENT_SCENARIO_FILE: scenario } },
    );
    expect(result.code, result.stderr).toBe(0);
    const d = dispatchedOf(result);
    dispatched.push(d.dispatchId);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    const words = "used 60,500 tokens of --max-tokens 50000";
    expect(record).toMatchObject({
      status: "ok",
      error: null,
      capCrossed: { cap: "tokens", limit: 50_000, used: 60_500, message: words },
    });
    for (const verb of ["result", "show"]) {
      const shown = await runCli([verb, d.dir], { env });
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain(`cap crossed: ${words}, reported with the CLI's final answer`);
    }
  });
});
