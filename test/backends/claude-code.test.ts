import { describe, expect, it } from "vitest";
import { claudeCodeBackend as claude } from "../../src/backends/claude-code.js";
import { accounts, totalOf, ZERO_COUNTS } from "../../src/domain/spend/usage.js";
import {
  BRIEF_PATH,
  describeRecordings,
  firstFacts,
  leftOpen,
  oneUse,
  opened,
  outcome,
  planRequest,
  recording,
  stdoutFacts,
  summarize,
} from "./recorded.js";

describeRecordings(claude, "claude", {
  // A claude.ai login (CLAUDE_CODE_OAUTH_TOKEN) and the unified headers: a rate_limit_event, no work.
  "window-allowed": {
    ends: "exited",
    at: 0.9,
    status: "ok",
    kind: null,
    tokens: { input: 10, cached: 0, output: 3 },
    models: { "claude-sonnet-5": 7.500000000000001e-5 },
    costUsd: 7.500000000000001e-5,
    costSource: "reported",
    reply: "LIVE-OK hi",
    error: null,
  },
  // The same at a warning: 91 % of the five-hour window used.
  "window-warning": {
    ends: "exited",
    at: 0.6,
    status: "ok",
    kind: null,
    tokens: { input: 10, cached: 0, output: 3 },
    models: { "claude-sonnet-5": 7.500000000000001e-5 },
    costUsd: 7.500000000000001e-5,
    costSource: "reported",
    reply: "LIVE-OK hi",
    error: null,
  },
  // A rejected five-hour window: its reset is the time to come back, not the banner's "8:21pm".
  "window-rejected": {
    ends: "exited",
    at: 0.7,
    status: "limit",
    kind: "quota",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: 0,
    costSource: "reported",
    reply: null,
    error: "You've hit your session limit · resets 8:21pm (UTC)",
    retryAfter: "2026-12-06T20:21:29.000Z",
  },
  always429: {
    ends: "provider-unavailable",
    at: 5.3,
    status: "limit",
    kind: "rate-limit",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: 0,
    costSource: "reported",
    reply: null,
    error: "API Error: Request rejected (429) · mockllm: rate limited",
  },
  always500: {
    ends: "provider-unavailable",
    at: 5.6,
    status: "limit",
    kind: "provider-down",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: 0,
    costSource: "reported",
    reply: null,
    error:
      "API Error: 500 mockllm: internal error. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:PORT).",
  },
  always529: {
    ends: "provider-unavailable",
    at: 5.3,
    status: "limit",
    kind: "provider-down",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: 0,
    costSource: "reported",
    reply: null,
    error:
      "API Error: 529 mockllm: overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:PORT).",
  },
  auth401: {
    ends: "provider-unavailable",
    at: 0.7,
    status: "failed",
    kind: "auth",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "HTTP 401 authentication_failed",
  },
  "auth401-retries2": {
    ends: "provider-unavailable",
    at: 0.7,
    status: "failed",
    kind: "auth",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: 0,
    costSource: "reported",
    reply: null,
    error: "Invalid API key · Fix external API key",
  },
  badrequest400: {
    ends: "exited",
    at: 0.6,
    status: "failed",
    kind: "request",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: 0,
    costSource: "reported",
    reply: null,
    error: "API Error: 400 messages: text content blocks must be non-empty (mockllm-badreq-1a8)",
  },
  context400: {
    ends: "exited",
    at: 0.6,
    status: "failed",
    kind: "context",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: 0,
    costSource: "reported",
    reply: null,
    error:
      "Prompt is too long · the request is ~215000 tokens (limit 200000) but this conversation is only ~1544 tokens — the rest is system prompt, tool definitions, and attachment content. A single-exchange conversation cannot be compacted; reduce attached files/tools or start with less context.",
  },
  forbidden403: {
    ends: "exited",
    at: 0.6,
    status: "failed",
    kind: "auth",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: 0,
    costSource: "reported",
    reply: null,
    error:
      "Failed to authenticate. API Error: 403 Your API key does not have permission to use the specified resource. (mockllm-forbidden-2c9)",
  },
  hang: {
    ends: "provider-unavailable",
    at: 483.4,
    status: "limit",
    kind: "provider-down",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "request failed: unknown",
  },
  model404: {
    ends: "exited",
    at: 0.6,
    status: "failed",
    kind: "model",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: 0,
    costSource: "reported",
    reply: null,
    error:
      "There's an issue with the selected model (claude-opus-4-8[1m]). It may not exist or you may not have access to it. Run --model to pick a different model.",
  },
  orphan: {
    ends: "exited",
    at: 0.9,
    status: "ok",
    kind: null,
    tokens: { input: 38083, cached: 0, output: 36 },
    models: { "claude-opus-4-8[1m]": 0.191315 },
    costUsd: 0.191315,
    costSource: "reported",
    reply: "Left a background sleep: started-bg",
    error: null,
  },
  "orphan-check": {
    ends: "exited",
    at: 1.4,
    status: "ok",
    kind: null,
    tokens: { input: 57277, cached: 0, output: 61 },
    models: { "claude-opus-4-8[1m]": 0.28791 },
    costUsd: 0.28791,
    costSource: "reported",
    reply: "Second command saw: 13913     1 13911 13911 sleep 1000",
    error: null,
  },
  quota: {
    ends: "exited",
    at: 0.6,
    status: "limit",
    kind: "quota",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: 0,
    costSource: "reported",
    reply: null,
    error: "Credit balance is too low",
  },
  "ratelimit-long": {
    ends: "exited",
    at: 0.6,
    status: "limit",
    kind: "rate-limit",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: 0,
    costSource: "reported",
    reply: null,
    error:
      "API Error: Request rejected (429) · This request would exceed your organization's rate limit of 50 requests per minute (model: claude-opus-4-8). The limit resets at 2026-11-30T16:18:40Z. For details, refer to: https://docs.claude.com/en/api/rate-limits. (mockllm-ratelimit-9b4)",
    retryAfter: "2026-11-30T16:18:40.000Z",
  },
  "resume-bogus": {
    ends: "exited",
    at: 0.6,
    status: "failed",
    kind: "resume",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: 0,
    costSource: "reported",
    reply: null,
    error: "No conversation found with session ID: 7d4e1c2a-0b3f-4a5e-9c8d-2f1e0a9b8c7d",
  },
  "retry-then-ok": {
    ends: "exited",
    at: 2.5,
    status: "ok",
    kind: null,
    tokens: { input: 19005, cached: 0, output: 14 },
    models: { "claude-opus-4-8[1m]": 0.095375 },
    costUsd: 0.095375,
    costSource: "reported",
    reply: "Recovered after 2 errors.",
    error: null,
  },
  text: {
    ends: "exited",
    at: 0.8,
    status: "ok",
    kind: null,
    tokens: { input: 19000, cached: 0, output: 12 },
    models: { "claude-opus-4-8[1m]": 0.0953 },
    costUsd: 0.0953,
    costSource: "reported",
    reply: "Hello from mockllm.",
    error: null,
  },
  tool2: {
    ends: "exited",
    at: 4,
    status: "ok",
    kind: null,
    tokens: { input: 38073, cached: 0, output: 29 },
    models: { "claude-opus-4-8[1m]": 0.19109 },
    costUsd: 0.19109,
    costSource: "reported",
    reply: "Done. The command printed: hi",
    error: null,
  },
  "unknown-flag": {
    ends: "exited",
    at: 0.4,
    status: "failed",
    kind: "cli",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "error: unknown option '--no-such-flag'",
  },
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
    expect(facts.error).toBeUndefined();
  });

  it.each([
    ["auth401", { status: 401, kind: "auth", message: "HTTP 401 authentication_failed" }],
    ["always429", { status: 429, kind: "rate-limit", message: "HTTP 429 rate_limit" }],
    ["always500", { status: 500, kind: "provider-down", message: "HTTP 500 server_error" }],
    ["always529", { status: 529, kind: "provider-down", message: "HTTP 529 overloaded" }],
    ["hang", { status: null, kind: "provider-down", message: "request failed: unknown" }],
  ] as const)("reads the status and category of the %s stream's retries as their kind", (scenario, retry) => {
    expect(
      firstFacts(claude, recording("claude", scenario), (f) => f.retry !== undefined).retry,
    ).toMatchObject(retry);
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
      usage: oneUse("run", { input: 38073, output: 29 }, { model: "claude-opus-4-8[1m]", costUsd: 0.19109 }),
      reply: { text: "Done. The command printed: hi", mode: "result" },
    });
  });

  it("lets is_error win over a result's subtype success, and reads its api_error_status", () => {
    const facts = firstFacts(claude, recording("claude", "always429"), (f) => f.final !== undefined);
    expect(facts.final).toEqual({
      isError: true,
      message: "API Error: Request rejected (429) · mockllm: rate limited",
    });
    expect(facts.error).toMatchObject({ status: 429, kind: "rate-limit", words: "provider" });
    expect(facts.reply).toBeUndefined();
  });

  it.each([
    ["auth401-retries2", 401, "auth", "cli"],
    ["forbidden403", 403, "auth", "provider"],
    ["quota", 400, "quota", "cli"],
    ["model404", 404, "model", "cli"],
    ["context400", 400, "context", "cli"],
    ["badrequest400", 400, "request", "provider"],
    ["resume-bogus", null, "resume", "cli"],
    ["always529", 529, "provider-down", "provider"],
  ] as const)("reads the %s stream's failed result as proving its kind", (scenario, status, kind, words) => {
    const facts = firstFacts(claude, recording("claude", scenario), (f) => f.final !== undefined);
    expect(facts.error).toMatchObject({ status, kind, words });
  });

  it("reads the category of the synthetic message before a failed result", () => {
    const facts = firstFacts(claude, recording("claude", "quota"), (f) => f.error !== undefined);
    expect(facts.final).toBeUndefined();
    expect(facts.error).toMatchObject({ kind: "quota", message: "Credit balance is too low" });
  });

  it("reads the reset time a rate limit's message names", () => {
    const facts = firstFacts(claude, recording("claude", "ratelimit-long"), (f) => f.final !== undefined);
    expect(facts.error?.retryAfter).toEqual({ atMs: Date.parse("2026-11-30T16:18:40Z") });
  });

  it("takes the synthetic assistant message before a failed result as an error, not an answer", () => {
    const facts = claude.parse(recording("claude", "always500").stdout[11] ?? "");
    expect(facts.reply).toBeUndefined();
    expect(facts.error?.message).toMatch(/^API Error: 500/);
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
    expect(claude.parse(line).usage).toEqual(
      oneUse("run", { input: 3210, cachedInput: 3000, cacheWrite: 200, output: 7 }, { costUsd: 0.5 }),
    );
  });

  /** An assistant line of one message of `blocks` content blocks' kind, with its usage. */
  const assistantLine = (id: string, block: Record<string, unknown>, output = 1) =>
    JSON.stringify({
      type: "assistant",
      message: {
        id,
        model: "claude-sonnet-4-5",
        content: [block],
        usage: {
          input_tokens: 1000,
          cache_read_input_tokens: 20_000,
          cache_creation_input_tokens: 500,
          output_tokens: output,
        },
      },
      parent_tool_use_id: null,
      session_id: "016b7acb-4ab6-4408-8dff-07fb28bbfee3",
    });

  it("counts a message's usage once, however many content blocks repeat it", () => {
    // Claude prints one assistant line per content block of a message, each with the message's usage.
    const lines = [
      assistantLine("msg_1", { type: "thinking", thinking: "…" }),
      assistantLine("msg_1", { type: "text", text: "Let me look." }),
      assistantLine("msg_1", { type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } }),
      assistantLine("msg_2", { type: "text", text: "Done." }, 40),
    ];
    const summary = summarize(claude, { ...recording("claude", "text"), stdout: lines, stderr: [] });
    expect(totalOf(accounts(summary.usage))).toEqual({
      input: 2 * 21_500,
      cachedInput: 2 * 20_000,
      cacheWrite: 2 * 500,
      output: 41,
      reasoning: 0,
    });
  });

  it("takes a message's later, larger usage in place of the earlier one, not on top of it", () => {
    const lines = [
      assistantLine("msg_1", { type: "text", text: "a" }, 1),
      assistantLine("msg_1", { type: "text", text: "b" }, 30),
    ];
    const summary = summarize(claude, { ...recording("claude", "text"), stdout: lines, stderr: [] });
    expect(totalOf(accounts(summary.usage)).output).toBe(30);
  });

  it("replaces the messages' live count with the result's per-model total, Claude's own dollars with it", () => {
    const rec = recording("claude", "tool2");
    const summary = summarize(claude, rec);
    expect(accounts(summary.usage)).toEqual([
      {
        model: "claude-opus-4-8[1m]",
        tokens: { ...ZERO_COUNTS, input: 38073, output: 29 },
        reportedUsd: 0.19109,
        unreported: ZERO_COUNTS,
      },
    ]);
    // Live, before the result: each message once (their output as it stood when they began: 1 each).
    const live = summarize(claude, { ...rec, stdout: rec.stdout.filter((l) => !l.includes('"result"')) });
    expect(totalOf(accounts(live.usage))).toEqual({ ...ZERO_COUNTS, input: 38073, output: 2 });
  });

  it("reads the per-model total of a result whose usage is all zeros (its own budget stopped it)", () => {
    const line = JSON.stringify({
      type: "result",
      subtype: "error_max_budget_usd",
      is_error: true,
      total_cost_usd: 0.00685,
      usage: {
        input_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 0,
      },
      modelUsage: {
        "claude-opus-4-8[1m]": {
          inputTokens: 1200,
          outputTokens: 34,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
          costUSD: 0.00685,
        },
      },
      errors: ["Reached maximum budget ($0.001)"],
    });
    const facts = claude.parse(line);
    expect(facts.usage).toEqual(
      oneUse("run", { input: 1200, output: 34 }, { model: "claude-opus-4-8[1m]", costUsd: 0.00685 }),
    );
    expect(facts.error).toMatchObject({ kind: "budget", message: "Reached maximum budget ($0.001)" });
    expect(facts.final).toEqual({ isError: true, message: "Reached maximum budget ($0.001)" });
    const got = claude.finalize(
      summarize(claude, { ...recording("claude", "text"), stdout: [line], stderr: [] }),
      {
        reason: "exited",
        code: 1,
        signal: null,
      },
    );
    expect(got).toMatchObject({ status: "limit", failure: { kind: "budget" } });
  });

  it("ignores usage that does not add up, saying why, and keeps the rest of the line", () => {
    const line = JSON.stringify({
      type: "assistant",
      message: {
        id: "m",
        content: [{ type: "text", text: "hi" }],
        usage: { input_tokens: "12", output_tokens: 1 },
      },
      parent_tool_use_id: null,
    });
    const facts = claude.parse(line);
    expect(facts.usage).toBeUndefined();
    expect(facts.usageIgnored).toBe("input_tokens is a string, not a number");
    expect(facts.reply).toEqual({ text: "hi", mode: "message" });
  });

  it("passes --max-cost on as its own --max-budget-usd", () => {
    expect(claude.plan(planRequest({ maxCostUsd: 2.5 })).args).toEqual([
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--max-budget-usd",
      "2.5",
    ]);
  });

  it("bills Anthropic for --model, else ANTHROPIC_MODEL, else its settings' model", () => {
    const billing = (args: string[], env: Record<string, string>, settings: string | null = null) =>
      claude.billing?.({ args, env, readText: (f) => (f === "/h/.claude/settings.json" ? settings : null) });
    expect(billing(["-p", "--model", "claude-sonnet-4-5"], { HOME: "/h" })).toEqual({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
    });
    expect(billing(["-p"], { HOME: "/h", ANTHROPIC_MODEL: "claude-haiku-4-5" })?.model).toBe(
      "claude-haiku-4-5",
    );
    expect(billing(["-p"], { HOME: "/h" }, '{"model":"claude-opus-4-1"}')?.model).toBe("claude-opus-4-1");
    expect(billing(["-p"], { HOME: "/h" })?.model).toBeNull();
  });

  it("does not take a sub-agent's text as the answer", () => {
    const line = JSON.stringify({
      type: "assistant",
      parent_tool_use_id: "toolu_parent",
      message: { content: [{ type: "text", text: "sub-agent notes" }] },
    });
    expect(claude.parse(line).reply).toBeUndefined();
  });

  it("gives as the reply every message after the last tool call, in order, when the result is the last of them", () => {
    const text = (t: string) =>
      JSON.stringify({
        type: "assistant",
        parent_tool_use_id: null,
        message: { content: [{ type: "text", text: t }] },
      });
    const tool = JSON.stringify({
      type: "assistant",
      parent_tool_use_id: null,
      message: {
        content: [
          { type: "text", text: "Running the tests." },
          { type: "tool_use", id: "t1", name: "Bash", input: { command: "npm test" } },
        ],
      },
    });
    const result = (t: string) =>
      JSON.stringify({ type: "result", subtype: "success", is_error: false, result: t });
    const rec = { ...recording("claude", "text"), stderr: [] };
    const report = [tool, text("## Report\n\nAll 12 tests pass."), text("Done.")];
    expect(summarize(claude, { ...rec, stdout: [...report, result("Done.")] }).reply).toBe(
      "## Report\n\nAll 12 tests pass.\n\nDone.",
    );
    // A result that is not what the messages said is Claude's own account: it wins.
    expect(summarize(claude, { ...rec, stdout: [...report, result("Summary.")] }).reply).toBe("Summary.");
    expect(summarize(claude, { ...rec, stdout: [tool, result("Only the result.")] }).reply).toBe(
      "Only the result.",
    );
  });

  it("records a run stopped at its wall limit as timeout even though Claude then printed a successful result", () => {
    const got = outcome(claude, recording("claude", "tool2"), "wall-timeout");
    expect(got.status).toBe("timeout");
    expect(got.reply).toBe("Done. The command printed: hi");
  });
});

describe("claude-code stderr and threads", () => {
  it.each([
    ["unknown-flag", "cli"],
    ["resume-bogus", "resume"],
  ] as const)("reads the %s stream's stderr line as a %s failure, still progress", (scenario, kind) => {
    const [line] = recording("claude", scenario).stderr;
    expect(claude.parseStderr?.(line ?? "")).toMatchObject({ progress: true, error: { kind } });
    expect(claude.parseStderr?.("some diagnostic")).toEqual({ progress: true });
  });

  it("accepts a session UUID as a thread and refuses anything else", () => {
    expect(claude.checkThread?.("a3a8eeed-ad4a-4d14-94ae-610dc038b311")).toBeNull();
    expect(claude.checkThread?.("latest")).toMatch(/a Claude Code thread is a UUID/);
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
