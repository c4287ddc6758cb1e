import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import type { Spec } from "../../src/domain/schemas.js";
import { systemFiles } from "../../supervisor/deps.js";
import { watchAgent } from "../../supervisor/watch-loop.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { readJson, tempDir } from "../helpers/folders.js";
import { loopSpec, neverExitingChild } from "../helpers/watch.js";

// The loop against a dispatch's caps, on a fake clock: the agent's lines (and its CLI's own usage log)
// are written at given times, as it would have; the loop must stop it at the poll that reads the report
// that crossed a cap, and never let a hostile report lower what was counted.

const START = Date.parse("2026-11-29T08:00:00Z");

const step = (input: number, cost: number | null = null) =>
  JSON.stringify({
    type: "step_finish",
    sessionID: "ses_dd9b0a858ffeXNS6E54rmGgtGg",
    part: {
      reason: "tool-calls",
      tokens: { input, output: 100, reasoning: 0 },
      ...(cost === null ? {} : { cost }),
    },
  });

async function watch(dir: string, spec: Spec, writes: [number, string, string][]) {
  const lines: { event: string; fields: Record<string, unknown> }[] = [];
  // Each write cuts a sleep short at its time, as inotify wakes the loop when the agent writes.
  const clock = new FakeClock({
    wall: START,
    events: writes.map(([at, file, line]) => ({ at, happen: () => fs.appendFileSync(file, `${line}\n`) })),
    wakeAtEvents: true,
  });
  const activity: number[] = [];
  const outcome = await watchAgent({
    dir,
    spec,
    backend: backendFor(spec.backend),
    child: neverExitingChild(),
    deps: {
      clock,
      files: {
        ...systemFiles,
        writeJson(file, value) {
          systemFiles.writeJson(file, value);
          if (file.endsWith("activity.json"))
            activity.push((value as { tokens: { input: number } }).tokens.input);
        },
      },
    },
    log: (event, fields = {}) => lines.push({ event, fields }),
    interrupt: new AbortController().signal,
  });
  return { outcome, at: clock.mono, log: lines, activity };
}

const LIMITS: Partial<Spec> = { idleMs: 60_000, wallMs: 600_000, stallMs: 30_000, pollMs: 250 };

describe("the watch loop against a dispatch's caps", () => {
  it("stops at the poll that reads the report crossing --max-tokens, naming the cap and the use", async () => {
    const dir = tempDir();
    const events = path.join(dir, "events.jsonl");
    const spec = loopSpec(dir, "opencode", { ...LIMITS, maxTokens: 35_000 });
    const { outcome, at } = await watch(
      dir,
      spec,
      [1, 2, 3, 4, 5, 6].map((n) => [n * 1000, events, step(10_000)] as [number, string, string]),
    );
    expect(outcome.reason).toBe("budget");
    expect(outcome.errorKind).toBe("budget");
    expect(outcome.budget?.message).toBe("used 40,400 tokens of --max-tokens 35000");
    // The fourth report came at 4 s; the loop read it at its next poll, before the fifth.
    expect(at).toBeGreaterThanOrEqual(4000);
    expect(at).toBeLessThan(4000 + 250 + 30);
  });

  it("stops at --max-cost by the CLI's own dollars", async () => {
    const dir = tempDir();
    const events = path.join(dir, "events.jsonl");
    const spec = loopSpec(dir, "opencode", { ...LIMITS, maxCostUsd: 1 });
    const { outcome } = await watch(
      dir,
      spec,
      [1, 2, 3, 4, 5].map((n) => [n * 1000, events, step(10, 0.3)] as [number, string, string]),
    );
    expect(outcome.reason).toBe("budget");
    expect(outcome.budget?.message).toBe("used $1.20 of --max-cost 1");
  });

  it("stops nothing for a crossing that comes with the final answer: the work is done", async () => {
    const dir = tempDir();
    const events = path.join(dir, "events.jsonl");
    const spec = loopSpec(dir, "opencode", { ...LIMITS, maxTokens: 100, graceAfterFinalMs: 2000 });
    const finished = JSON.stringify({
      type: "step_finish",
      part: { reason: "stop", tokens: { input: 500, output: 10 } },
    });
    const { outcome, at } = await watch(dir, spec, [[1000, events, finished]]);
    expect(outcome.reason).toBe("after-final");
    expect(at).toBeGreaterThanOrEqual(3000);
  });

  it("ignores usage that does not add up, with a line in supervisor.log, and never lowers what it counted", async () => {
    const dir = tempDir();
    const events = path.join(dir, "events.jsonl");
    const spec = loopSpec(dir, "claude-code", { ...LIMITS, idleMs: 8000, stallMs: 7000 });
    const result = (input: unknown) =>
      JSON.stringify({
        type: "result",
        subtype: "success",
        is_error: false,
        usage: { input_tokens: input, output_tokens: 5 },
      });
    const writes: [number, string, string][] = [
      [1000, events, result(1000)],
      [2500, events, result(-50)],
      [4000, events, result(Number.MAX_SAFE_INTEGER * 10)],
      [5500, events, result("9999")],
      [7000, events, result(400)],
    ];
    const { outcome, log, activity } = await watch(dir, spec, writes);
    expect(outcome.reason).toBe("idle-timeout");
    const ignored = log.filter((l) => l.event === "usage-ignored").map((l) => l.fields.why);
    expect(ignored).toEqual([
      "input_tokens is negative (-50)",
      "input_tokens is absurdly large (90071992547409900)",
      "input_tokens is a string, not a number",
      "a run total lower than what was counted before it",
    ]);
    expect(activity.length).toBeGreaterThan(0);
    for (let i = 1; i < activity.length; i++)
      expect(activity[i]).toBeGreaterThanOrEqual(activity[i - 1] ?? 0);
    expect(readJson(path.join(dir, "activity.json"))).toMatchObject({ tokens: { input: 1000, output: 5 } });
  });

  it("reads codex's rollout while it runs: this run's responses stop it long before turn.completed", async () => {
    const dir = tempDir();
    const codexHome = path.join(tempDir(), "codex-home");
    const thread = "01a23153-30b1-7893-bf7c-c013ef717699";
    const day = path.join(codexHome, "sessions", "2026", "11", "29");
    fs.mkdirSync(day, { recursive: true });
    const rollout = path.join(day, `rollout-2026-11-29T07-00-00-${thread}.jsonl`);
    const record = (at: number, id: string, input: number) =>
      JSON.stringify({
        timestamp: new Date(START + at).toISOString(),
        type: "token_usage_record",
        payload: {
          thread_id: thread,
          response_id: id,
          usage: {
            input_tokens: input,
            cached_input_tokens: input / 2,
            output_tokens: 50,
            reasoning_output_tokens: 0,
          },
        },
      });
    // A resumed thread: its rollout holds an earlier run's response, dated before this agent started.
    fs.writeFileSync(rollout, `${record(-3_600_000, "resp_old", 90_000)}\n`);
    const events = path.join(dir, "events.jsonl");
    const spec = loopSpec(dir, "codex", { ...LIMITS, env: { CODEX_HOME: codexHome }, maxTokens: 25_000 });
    const turn = '{"timestamp":"2026-11-29T08:00:00.500Z","type":"turn_context","payload":{"model":"gpt-5"}}';
    const { outcome, log } = await watch(dir, spec, [
      [200, events, JSON.stringify({ type: "thread.started", thread_id: thread })],
      [500, rollout, turn],
      [1000, rollout, record(1000, "resp_1", 10_000)],
      [1000, events, '{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"ls"}}'],
      [2000, rollout, record(2000, "resp_2", 10_000)],
      [3000, rollout, record(3000, "resp_3", 10_000)],
      [3000, events, '{"type":"item.started","item":{"id":"i3","type":"command_execution","command":"ls"}}'],
      [60_000, events, '{"type":"turn.completed","usage":{"input_tokens":120000,"output_tokens":150}}'],
    ]);
    expect(outcome.reason).toBe("budget");
    expect(outcome.budget?.message).toBe("used 30,150 tokens of --max-tokens 25000");
    expect(log.filter((l) => l.event === "usage-ignored")).toEqual([]);
    // What the supervisor read is in the folder, for the record: this run's responses, with their model.
    const copied = fs
      .readFileSync(path.join(dir, "usage.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { key: string; uses: { model: string }[] });
    expect(copied.map((c) => [c.key, c.uses[0]?.model])).toEqual([
      ["resp_1", "gpt-5"],
      ["resp_2", "gpt-5"],
      ["resp_3", "gpt-5"],
    ]);
  });
});
