import { describe, expect, it } from "vitest";
import { claudeCodeBackend as claude } from "../../src/backends/claude-code.js";
import {
  BRIEF_PATH,
  describeRecordings,
  firstFacts,
  leftOpen,
  opened,
  outcome,
  planRequest,
  recording,
  stdoutFacts,
  summarize,
} from "./recorded.js";

const ZERO = { input: 0, cached: 0, output: 0 };
const SERVER_ERROR =
  "This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:PORT).";

describeRecordings(claude, "claude", {
  text: {
    status: "ok",
    tokens: { input: 19000, cached: 0, output: 12 },
    costUsd: 0.0953,
    reply: "Hello from mockllm.",
    error: null,
  },
  tool2: {
    status: "ok",
    tokens: { input: 38073, cached: 0, output: 29 },
    costUsd: 0.19109,
    reply: "Done. The command printed: hi",
    error: null,
  },
  "retry-then-ok": {
    status: "ok",
    tokens: { input: 19005, cached: 0, output: 14 },
    costUsd: 0.095375,
    reply: "Recovered after 2 errors.",
    error: null,
  },
  orphan: {
    status: "ok",
    tokens: { input: 38083, cached: 0, output: 36 },
    costUsd: 0.191315,
    reply: "Left a background sleep: started-bg",
    error: null,
  },
  "orphan-check": {
    status: "ok",
    tokens: { input: 57277, cached: 0, output: 61 },
    costUsd: 0.28791,
    reply: "Second command saw: 13913     1 13911 13911 sleep 1000",
    error: null,
  },
  always429: {
    status: "limit",
    tokens: ZERO,
    costUsd: 0,
    reply: null,
    error: "API Error: Request rejected (429) · mockllm: rate limited",
  },
  always500: {
    status: "failed",
    tokens: ZERO,
    costUsd: 0,
    reply: null,
    error: `API Error: 500 mockllm: internal error. ${SERVER_ERROR}`,
  },
  always529: {
    status: "failed",
    tokens: ZERO,
    costUsd: 0,
    reply: null,
    error: `API Error: 529 mockllm: overloaded. ${SERVER_ERROR}`,
  },
  hang: { status: "failed", tokens: ZERO, costUsd: null, reply: null, error: "exited: exit code 143" },
});

describe("claude-code line facts", () => {
  it("names the thread from system/init's session_id", () => {
    const facts = claude.parse(recording("claude", "text").stdout[0] ?? "");
    expect(facts).toMatchObject({ progress: true, thread: "016b7acb-4ab6-4408-8dff-07fb28bbfee3" });
  });

  it("opens a tool call at the assistant's tool_use id and closes it at the user's tool_result", () => {
    const rec = recording("claude", "tool2");
    expect(opened(claude, rec)).toEqual([{ id: "toolu_mx1joikpc", label: "$ sleep 3; echo hi" }]);
    expect(firstFacts(claude, rec, (f) => f.toolsClosed !== undefined).toolsClosed).toEqual([
      "toolu_mx1joikpc",
    ]);
    expect(leftOpen(claude, rec)).toEqual([]);
  });

  it("closes each of two successive tool calls by its own id", () => {
    const rec = recording("claude", "orphan-check");
    expect(opened(claude, rec).map((t) => t.id)).toEqual(["toolu_mx1jpdkf1f", "toolu_mx1jpdnk1h"]);
    expect(stdoutFacts(claude, rec).flatMap((f) => f.toolsClosed ?? [])).toEqual([
      "toolu_mx1jpdkf1f",
      "toolu_mx1jpdnk1h",
    ]);
    expect(leftOpen(claude, rec)).toEqual([]);
  });

  it("reads a system/api_retry line as a retry with its attempt and maximum, not progress", () => {
    const facts = claude.parse(recording("claude", "always429").stdout[2] ?? "");
    expect(facts).toMatchObject({
      progress: false,
      retry: { attempt: 2, max: 10 },
      describe: expect.stringMatching(/^retrying 2\/10/),
    });
    expect(facts.limit).toBeUndefined();
  });

  it("counts every api_retry of a stream as a retry", () => {
    expect(summarize(claude, recording("claude", "always500")).retries).toBe(10);
    expect(summarize(claude, recording("claude", "retry-then-ok")).retries).toBe(2);
    expect(summarize(claude, recording("claude", "hang")).retries).toBe(1);
  });

  it("reads a successful result as the final event with its usage, cost and answer", () => {
    const facts = firstFacts(claude, recording("claude", "tool2"), (f) => f.final !== undefined);
    expect(facts).toMatchObject({
      final: { isError: false, message: null },
      usage: { input: 38073, cached: 0, output: 29 },
      costUsd: 0.19109,
      reply: { text: "Done. The command printed: hi", mode: "replace" },
    });
  });

  it("lets is_error win over a result's subtype success, and marks a 429 as a limit", () => {
    const facts = firstFacts(claude, recording("claude", "always429"), (f) => f.final !== undefined);
    expect(facts.final).toEqual({
      isError: true,
      message: "API Error: Request rejected (429) · mockllm: rate limited",
    });
    expect(facts.limit).toBe(true);
    expect(facts.reply).toBeUndefined();
  });

  it("does not mark an overloaded 529 as a limit", () => {
    const facts = firstFacts(claude, recording("claude", "always529"), (f) => f.final !== undefined);
    expect(facts.limit).toBe(false);
  });

  it("takes the synthetic assistant message before a failed result as an error, not an answer", () => {
    const facts = claude.parse(recording("claude", "always500").stdout[11] ?? "");
    expect(facts.reply).toBeUndefined();
    expect(facts.error).toMatch(/^API Error: 500/);
  });

  it("adds cache reads and writes to input tokens, since Claude's input_tokens leaves them out", () => {
    const line = JSON.stringify({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "ok",
      usage: {
        input_tokens: 10,
        cache_creation_input_tokens: 200,
        cache_read_input_tokens: 3000,
        output_tokens: 7,
      },
      total_cost_usd: 0.5,
    });
    expect(claude.parse(line).usage).toEqual({ input: 3210, cached: 3000, output: 7 });
  });

  it("does not take a sub-agent's text as the answer", () => {
    const line = JSON.stringify({
      type: "assistant",
      parent_tool_use_id: "toolu_parent",
      message: { content: [{ type: "text", text: "sub-agent notes" }] },
    });
    expect(claude.parse(line).reply).toBeUndefined();
  });

  it("records a run stopped at its wall limit as timeout even though Claude then printed a successful result", () => {
    const got = outcome(claude, recording("claude", "tool2"), "wall-timeout");
    expect(got.status).toBe("timeout");
    expect(got.reply).toBe("Done. The command printed: hi");
  });
});

describe("claude-code plan", () => {
  it("runs claude -p with stream-json on stdin's brief, never putting the brief in argv", () => {
    const plan = claude.plan(planRequest());
    expect(plan).toEqual({
      cmd: "/opt/bin/agent",
      args: ["-p", "--output-format", "stream-json", "--verbose"],
      env: {},
      stdin: "brief",
    });
    expect(plan.args).not.toContain(BRIEF_PATH);
  });

  it("resumes a session with --resume and passes model, effort and extra arguments", () => {
    const plan = claude.plan(
      planRequest({ thread: "sess-1", model: "opus", effort: "high", extraArgs: ["--max-turns", "5"] }),
    );
    expect(plan.args).toEqual([
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--resume",
      "sess-1",
      "--model",
      "opus",
      "--effort",
      "high",
      "--max-turns",
      "5",
    ]);
  });

  it.each([
    ["read-only", ["--permission-mode", "dontAsk"]],
    ["workspace-write", ["--permission-mode", "acceptEdits"]],
    ["full", ["--dangerously-skip-permissions"]],
  ] as const)("maps access %s to Claude's own permission flags", (access, flags) => {
    expect(claude.plan(planRequest({ access })).args.slice(4)).toEqual(flags);
  });

  it("names its executable, override variable and defaults", () => {
    expect(claude).toMatchObject({
      id: "claude-code",
      defaultBin: "claude",
      binEnv: "CATHERD_CLAUDE_BIN",
      versionArgs: ["--version"],
      defaults: { idleMs: 15 * 60_000, wallMs: 90 * 60_000, graceAfterFinalMs: 30_000 },
    });
  });
});
