import { describe, expect, it } from "vitest";
import { geminiBackend as gemini } from "../../src/backends/gemini.js";
import { emptySummary } from "../../src/domain/ending/summary.js";
import { ZERO_COUNTS } from "../../src/domain/spend/usage.js";
import { NEUTRAL, PROGRESS } from "../../src/domain/watch/facts.js";
import { initialWatch, observe } from "../../src/domain/watch/watch.js";
import {
  BRIEF_PATH,
  describeRecordings,
  firstFacts,
  leftOpen,
  oneUse,
  opened,
  planRequest,
  recording,
  stdoutFacts,
  summarize,
} from "./recorded.js";

const parseStderr = gemini.parseStderr ?? (() => PROGRESS);

describeRecordings(gemini, "gemini", {
  // A 429 whose RetryInfo says 3600 s: gemini's "Suggested retry after 3600s." (exit 173).
  "retry-info-3600": {
    ends: "exited",
    at: 1.3,
    status: "limit",
    kind: "rate-limit",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "Resource has been exhausted (e.g. check quota).",
    retryAfter: "2026-12-06T20:21:47.337Z",
  },
  // A TerminalQuotaError of reason INSUFFICIENT_G1_CREDITS_BALANCE (its 7200 s delay only in the stderr dump).
  "credits-g1": {
    ends: "exited",
    at: 1.3,
    status: "limit",
    kind: "quota",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "You have run out of Google One AI credits.",
  },
  always429: {
    ends: "provider-unavailable",
    at: 18.6,
    status: "limit",
    kind: "rate-limit",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "mockllm: rate limited",
  },
  always500: {
    ends: "provider-unavailable",
    at: 19.2,
    status: "limit",
    kind: "provider-down",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "mockllm: internal error",
  },
  auth400key: {
    ends: "exited",
    at: 1.4,
    status: "failed",
    kind: "auth",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "API key not valid. Please pass a valid API key. (mockllm-auth-7f3)",
  },
  auth401: {
    ends: "exited",
    at: 1.2,
    status: "failed",
    kind: "auth",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project. (mockllm-auth-7f3)",
  },
  badrequest400: {
    ends: "exited",
    at: 1.4,
    status: "failed",
    kind: "request",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "Request contains an invalid argument. (mockllm-badreq-1a8)",
  },
  context400: {
    ends: "exited",
    at: 1.3,
    status: "failed",
    kind: "context",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576). (mockllm-context-8a6)",
  },
  forbidden403: {
    ends: "exited",
    at: 1.2,
    status: "failed",
    kind: "auth",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "The caller does not have permission (mockllm-forbidden-2c9)",
  },
  hang: {
    ends: "provider-unavailable",
    at: 201,
    status: "limit",
    kind: "provider-down",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "Attempt 5 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request",
  },
  model404: {
    ends: "exited",
    at: 1.2,
    status: "failed",
    kind: "model",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "models/gemini-2.5-flash is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods. (mockllm-model-4e2)",
  },
  "orphan-check": {
    ends: "exited",
    at: 2.6,
    status: "ok",
    kind: null,
    tokens: { input: 35654, cached: 0, output: 61 },
    models: { "gemini-mock": null },
    costUsd: null,
    costSource: null,
    reply:
      "Second command saw: <untrusted_context>\nOutput: 15906     1 15904 15904 sleep 1000\nProcess Group PGID: 15907\n</untrusted_context>",
    error: null,
  },
  quota: {
    ends: "exited",
    at: 1.2,
    status: "limit",
    kind: "quota",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/usage?tab=rate-limit. (mockllm-quota-5d1)",
  },
  "ratelimit-long": {
    ends: "exited",
    at: 1.3,
    status: "limit",
    kind: "rate-limit",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "Resource has been exhausted (e.g. check quota). Please retry in 3600s. (mockllm-ratelimit-9b4)",
    retryAfter: "2026-11-30T16:18:42.090Z",
  },
  "resume-bogus": {
    ends: "exited",
    at: 1.3,
    status: "failed",
    kind: "resume",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "Error resuming session: No previous sessions found for this project.",
  },
  "resume-bogus-sessions": {
    ends: "exited",
    at: 1.2,
    status: "failed",
    kind: "resume",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: 'Error resuming session: Invalid session identifier "7d4e1c2a-0b3f-4a5e-9c8d-2f1e0a9b8c7d".',
  },
  "retry-then-ok": {
    ends: "exited",
    at: 16.5,
    status: "ok",
    kind: null,
    tokens: { input: 11748, cached: 0, output: 14 },
    models: { "gemini-mock": null },
    costUsd: null,
    costSource: null,
    reply: "Recovered after 2 errors.",
    error: null,
  },
  text: {
    ends: "exited",
    at: 1.7,
    status: "ok",
    kind: null,
    tokens: { input: 11739, cached: 0, output: 12 },
    models: { "gemini-mock": null },
    costUsd: null,
    costSource: null,
    reply: "Hello from mockllm.",
    error: null,
  },
  tool2: {
    ends: "exited",
    at: 4.7,
    status: "ok",
    kind: null,
    tokens: { input: 23597, cached: 0, output: 29 },
    models: { "gemini-mock": null },
    costUsd: null,
    costSource: null,
    reply:
      "Done. The command printed: <untrusted_context>\nOutput: hi\nProcess Group PGID: 14504\n</untrusted_context>",
    error: null,
  },
  "unknown-flag": {
    ends: "exited",
    at: 1,
    status: "failed",
    kind: "cli",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "Unknown arguments: such-flag, suchFlag",
  },
});

describe("gemini line facts", () => {
  it("names the thread from init's session_id", () => {
    const facts = gemini.parse(recording("gemini", "text").stdout[0] ?? "");
    expect(facts).toMatchObject({ progress: true, thread: "58f5a4bb-a3a8-47f6-be98-6645bdb65313" });
  });

  it("opens a tool call at tool_use.tool_id and closes it at tool_result.tool_id", () => {
    const rec = recording("gemini", "tool2");
    const id = "run_shell_command__run_shell_command_1795939023566_0";
    expect(opened(gemini, rec)).toEqual([{ id, label: "$ sleep 3; echo hi" }]);
    expect(firstFacts(gemini, rec, (f) => f.toolsClosed !== undefined).toolsClosed).toEqual([id]);
    expect(leftOpen(gemini, recording("gemini", "orphan-check"))).toEqual([]);
  });

  it("joins the assistant's message deltas into the reply", () => {
    const replies = stdoutFacts(gemini, recording("gemini", "text")).flatMap((f) =>
      f.reply ? [f.reply] : [],
    );
    expect(replies).toEqual([
      { text: "Hello ", mode: "append" },
      { text: "from ", mode: "append" },
      { text: "mockllm.", mode: "append" },
    ]);
  });

  it("keeps only what the agent says after its last tool call as the reply", () => {
    const lines = [
      '{"type":"message","role":"assistant","content":"Let me look.","delta":true}',
      '{"type":"tool_use","tool_name":"read_file","tool_id":"t1","parameters":{"file_path":"a.ts"}}',
      '{"type":"tool_result","tool_id":"t1","status":"success","output":"…"}',
      '{"type":"message","role":"assistant","content":"All good.","delta":true}',
      '{"type":"result","status":"success","stats":{"input_tokens":5,"output_tokens":2,"cached":1}}',
    ];
    const got = gemini.finalize(
      summarize(gemini, { ...recording("gemini", "text"), stdout: lines, stderr: [] }),
      {
        reason: "exited",
        code: 0,
        signal: null,
      },
    );
    expect(got).toMatchObject({
      status: "ok",
      reply: "All good.",
      usage: { total: { ...ZERO_COUNTS, input: 5, cachedInput: 1, output: 2 } },
    });
  });

  it("reads an error event of severity error as an error with its kind, and a warning as progress", () => {
    const quota = '{"type":"error","severity":"error","message":"Quota exceeded for gemini-2.5-pro"}';
    expect(gemini.parse(quota)).toMatchObject({
      progress: true,
      error: { message: "Quota exceeded for gemini-2.5-pro", kind: "quota" },
    });
    const warning = gemini.parse(
      '{"type":"error","severity":"warning","message":"Loop detected, stopping execution"}',
    );
    expect(warning).toEqual({ progress: true, describe: "Loop detected, stopping execution" });
  });

  it("reads result.stats as usage, input_tokens already including cached", () => {
    const facts = firstFacts(gemini, recording("gemini", "tool2"), (f) => f.final !== undefined);
    expect(facts).toMatchObject({
      final: { isError: false, message: null },
      usage: oneUse("run", { input: 23597, output: 29 }, { model: "gemini-mock" }),
    });
  });

  it("counts thoughts, which stats leave out of output_tokens but not out of total_tokens, as output", () => {
    const line = JSON.stringify({
      type: "result",
      status: "success",
      stats: {
        models: {
          "gemini-2.5-pro": {
            total_tokens: 1500,
            input_tokens: 1000,
            output_tokens: 100,
            cached: 600,
            input: 400,
          },
        },
      },
    });
    expect(gemini.parse(line).usage).toEqual(
      oneUse(
        "run",
        { input: 1000, cachedInput: 600, output: 500, reasoning: 400 },
        { model: "gemini-2.5-pro" },
      ),
    );
  });

  it("reads each model message of its session file once per id, thoughts and tool prompts included", () => {
    const message = JSON.stringify({
      id: "5aa631cc",
      timestamp: "2026-12-01T11:18:42.908Z",
      type: "gemini",
      content: "",
      tokens: { input: 1200, output: 34, cached: 200, thoughts: 16, tool: 5, total: 1255 },
      model: "gemini-2.5-flash",
    });
    expect(gemini.usageLog?.parse(message)).toEqual({
      at: "2026-12-01T11:18:42.908Z",
      facts: {
        usage: oneUse(
          "message",
          { input: 1205, cachedInput: 200, output: 50, reasoning: 16 },
          { model: "gemini-2.5-flash", key: "5aa631cc" },
        ),
      },
    });
    expect(gemini.usageLog?.parse('{"$set":{"lastUpdated":"2026-12-01T11:18:42.908Z"}}')).toBeNull();
    expect(gemini.usageLog?.parse('{"id":"u","type":"user","content":[{"text":"tokens"}]}')).toBeNull();
  });

  it("finds the session file of a session by its id's first eight characters and its header", () => {
    const id = "c15cfcd2-79d4-4c94-b065-887bb0457a44";
    const tree: Record<string, string[]> = {
      "/h/.gemini/tmp": ["work", "other"],
      "/h/.gemini/tmp/work/chats": ["session-2026-12-01T11-18-c15cfcd2.jsonl"],
      "/h/.gemini/tmp/other/chats": ["session-2026-12-01T10-00-c15cfcd2.jsonl"],
    };
    const heads: Record<string, string> = {
      "/h/.gemini/tmp/work/chats/session-2026-12-01T11-18-c15cfcd2.jsonl": JSON.stringify({ sessionId: id }),
      "/h/.gemini/tmp/other/chats/session-2026-12-01T10-00-c15cfcd2.jsonl": JSON.stringify({
        sessionId: "x",
      }),
    };
    const context = {
      env: { HOME: "/h" },
      listDir: (p: string) => tree[p] ?? [],
      firstLine: (p: string) => heads[p] ?? null,
    };
    expect(gemini.usageLog?.locate(id, context)).toBe(
      "/h/.gemini/tmp/work/chats/session-2026-12-01T11-18-c15cfcd2.jsonl",
    );
  });

  it("bills Google for --model, else GEMINI_MODEL, else its settings' model", () => {
    const billing = (args: string[], env: Record<string, string>) =>
      gemini.billing?.({ args, env, readText: () => '{"model":{"name":"gemini-2.5-pro"}}' });
    expect(billing(["--model", "gemini-2.5-flash"], { HOME: "/h" })).toEqual({
      provider: "google",
      model: "gemini-2.5-flash",
    });
    expect(billing([], { HOME: "/h", GEMINI_MODEL: "gemini-2.0-flash" })?.model).toBe("gemini-2.0-flash");
    expect(billing([], { HOME: "/h" })?.model).toBe("gemini-2.5-pro");
  });

  it("lets result.status decide over the exit codes 244 and 173", () => {
    const failed = firstFacts(gemini, recording("gemini", "always500"), (f) => f.final !== undefined);
    expect(failed.final?.isError).toBe(true);
    expect(failed.error).toMatchObject({ status: 500, kind: "provider-down" });
    const limited = firstFacts(gemini, recording("gemini", "always429"), (f) => f.final !== undefined);
    expect(limited.error).toMatchObject({ kind: "rate-limit", message: "mockllm: rate limited" });
    const ok = gemini.finalize(summarize(gemini, recording("gemini", "text")), {
      reason: "exited",
      code: 244,
      signal: null,
    });
    expect(ok.status).toBe("ok");
  });

  it.each([
    ["auth401", 401, "auth", "provider"],
    ["auth400key", 400, "auth", "provider"],
    ["forbidden403", 403, "auth", "provider"],
    ["quota", null, "quota", "cli"],
    ["ratelimit-long", null, "rate-limit", "cli"],
    ["model404", null, "model", "cli"],
    ["context400", 400, "context", "provider"],
    ["badrequest400", 400, "request", "provider"],
  ] as const)("reads the %s stream's failed result as proving its kind", (scenario, status, kind, words) => {
    const facts = firstFacts(gemini, recording("gemini", scenario), (f) => f.final !== undefined);
    expect(facts.error).toMatchObject({ status, kind, words });
  });

  it("reads the provider's message out of the raw JSON body inside [API Error: …]", () => {
    const facts = firstFacts(gemini, recording("gemini", "forbidden403"), (f) => f.final !== undefined);
    expect(facts.final?.message).toBe("The caller does not have permission (mockllm-forbidden-2c9)");
  });

  it("places a retry delay the result names at the result's own time", () => {
    const facts = firstFacts(gemini, recording("gemini", "ratelimit-long"), (f) => f.final !== undefined);
    expect(facts.error?.retryAfter).toEqual({
      delayMs: 3_600_000,
      fromMs: Date.parse("2026-11-30T15:18:42.090Z"),
    });
  });

  it.each([
    [145, "auth"],
    [147, "auth"],
    [173, "rate-limit"],
    [144, "request"],
    [244, "provider-down"],
    [41, "auth"],
    [1, "cli"],
    [42, "cli"],
  ] as const)("takes exit code %i, with nothing else to go by, as evidence of %s", (code, kind) => {
    const got = gemini.finalize(emptySummary(), { reason: "exited", code, signal: null });
    expect(got.failure?.kind).toBe(kind);
    expect(got.failure?.message).toBe(`exit code ${code}`);
  });

  it("records a gemini that exited 0 without a result event as failed, but one that lingered after it as ok", () => {
    const summary = emptySummary();
    expect(gemini.finalize(summary, { reason: "exited", code: 0, signal: null }).status).toBe("failed");
    const text = summarize(gemini, recording("gemini", "text"));
    expect(gemini.finalize(text, { reason: "after-final", code: null, signal: "SIGTERM" }).status).toBe("ok");
  });
});

describe("gemini stderr", () => {
  const lines = recording("gemini", "always500").stderr;

  it("reads 'Attempt n failed with status 500. Retrying with backoff' as a retry, not progress", () => {
    const line = lines.find((l) => l.startsWith("Attempt 3 failed")) ?? "";
    expect(parseStderr(line)).toMatchObject({
      progress: false,
      retry: { attempt: 3, max: null },
      describe: "retrying 3 (HTTP 500)",
    });
  });

  it("reads a retry that failed before any status (a hung connection) as a retry too", () => {
    const line = recording("gemini", "hang").stderr.find((l) => l.startsWith("Attempt 2 failed")) ?? "";
    expect(parseStderr(line)).toMatchObject({
      progress: false,
      retry: { attempt: 2, max: null },
      describe: "retrying 2",
    });
  });

  it.each([
    "    at throwErrorIfNotOK (file:///opt/agents/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267833:24)",
    "    at async Turn.run (file:///opt/agents/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:333001:24) {",
    "  status: 429",
    "  retryDelayMs: undefined,",
    "}",
    "",
  ])("treats the trace line %j as neutral: neither progress nor a retry", (line) => {
    expect(parseStderr(line)).toEqual(NEUTRAL);
  });

  it.each([
    "YOLO mode is enabled. All tool calls will be automatically approved.",
    "Ripgrep is not available. Falling back to GrepTool.",
    "[STARTUP] Phase 'cleanup_ops' was started but never ended. Skipping metrics.",
    "[STARTUP] Cannot measure phase 'cleanup_ops': start mark 'startup:cleanup_ops:start' not found (likely cleared by reset).",
  ])("treats the diagnostic line %j as neutral: gemini works on stdout", (line) => {
    expect(parseStderr(line)).toEqual(NEUTRAL);
  });

  it("keeps a retry streak across a start-up notice printed between two attempts", () => {
    const attempt = (n: number) =>
      `Attempt ${n} failed with status 500. Retrying with backoff... _ApiError: {}`;
    const facts = [attempt(1), "[STARTUP] Cannot measure phase 'cleanup_ops'", attempt(2), attempt(3)].map(
      parseStderr,
    );
    expect(facts.filter((f) => f.progress)).toEqual([]);
    expect(facts.filter((f) => f.retry !== undefined)).toHaveLength(3);
  });

  it("reads the give-up line as an error with the kind its words say", () => {
    expect(parseStderr("Attempt 10 failed: mockllm: rate limited. Max attempts reached")).toMatchObject({
      progress: true,
      error: { message: "mockllm: rate limited", kind: "rate-limit" },
    });
    const last = lines.find((l) => l.includes("Max attempts reached")) ?? "";
    expect(parseStderr(last)).toMatchObject({
      progress: true,
      error: { kind: "provider-down", status: 500 },
    });
  });

  it("reads the status of each retry as its kind", () => {
    const retry = (scenario: string) =>
      recording("gemini", scenario)
        .stderr.map(parseStderr)
        .find((f) => f.retry !== undefined)?.retry;
    expect(retry("always429")).toMatchObject({ status: 429, kind: "rate-limit" });
    expect(retry("always500")).toMatchObject({ status: 500, kind: "provider-down" });
    expect(retry("hang")).toMatchObject({ status: null, kind: "provider-down" });
  });

  it.each([
    ["  cause: { code: 429, message: 'mockllm: rate limited', details: [] },", 429, "mockllm: rate limited"],
    [
      "    message: 'You exceeded your current quota, please check your plan. (mockllm-quota-5d1)\\n' +",
      null,
      "You exceeded your current quota, please check your plan. (mockllm-quota-5d1)",
    ],
  ])("reads the provider's words in the error dump line %j, not as progress", (line, status, message) => {
    expect(parseStderr(line)).toMatchObject({
      progress: false,
      error: { status, message, words: "provider" },
    });
  });

  it.each([
    ["resume-bogus", "resume"],
    ["resume-bogus-sessions", "resume"],
    ["unknown-flag", "cli"],
  ] as const)("reads the first error line of the %s stream as a %s failure", (scenario, kind) => {
    const facts = recording("gemini", scenario).stderr.map(parseStderr);
    expect(facts.find((f) => f.error !== undefined)?.error?.kind).toBe(kind);
  });

  it("accepts a session UUID as a thread, not 'latest' or an index", () => {
    expect(gemini.checkThread?.("9cc73193-c0e5-4878-8694-f0ebcf73a3d6")).toBeNull();
    expect(gemini.checkThread?.("latest")).toMatch(/a gemini thread is a UUID/);
    expect(gemini.checkThread?.("3")).not.toBeNull();
  });

  it("keeps the consecutive retry count through the traces between retries", () => {
    let watch = initialWatch(0);
    let most = 0;
    for (const [i, line] of lines.entries()) {
      watch = observe(watch, parseStderr(line), i);
      most = Math.max(most, watch.consecutiveRetries);
    }
    expect(most).toBe(9);
    expect(summarize(gemini, recording("gemini", "always500")).retries).toBe(9);
    expect(summarize(gemini, recording("gemini", "retry-then-ok")).retries).toBe(2);
  });
});

describe("gemini plan", () => {
  it("runs gemini headless with stream-json and the brief on stdin, never -p or the brief in argv", () => {
    const plan = gemini.plan(planRequest());
    expect(plan).toEqual({
      cmd: "/opt/bin/agent",
      args: ["--output-format", "stream-json", "--skip-trust"],
      env: {},
      stdin: "brief",
    });
    expect(plan.args).not.toContain("-p");
    expect(plan.args).not.toContain("--prompt");
    expect(plan.args).not.toContain(BRIEF_PATH);
  });

  it("resumes a session with --resume and passes the model and extra arguments, but no effort flag", () => {
    const plan = gemini.plan(
      planRequest({ thread: "sess-1", model: "gemini-2.5-pro", effort: "high", extraArgs: ["--debug"] }),
    );
    expect(plan.args).toEqual([
      "--output-format",
      "stream-json",
      "--skip-trust",
      "--resume",
      "sess-1",
      "--model",
      "gemini-2.5-pro",
      "--debug",
    ]);
  });

  it.each([
    ["read-only", "default"],
    ["workspace-write", "auto_edit"],
    ["full", "yolo"],
  ] as const)("maps access %s to --approval-mode %s", (access, mode) => {
    expect(gemini.plan(planRequest({ access })).args.slice(3)).toEqual(["--approval-mode", mode]);
  });

  it("names its executable, override variable and defaults", () => {
    expect(gemini).toMatchObject({
      id: "gemini",
      defaultBin: "gemini",
      binEnv: "CATHERD_GEMINI_BIN",
      versionArgs: ["--version"],
      defaults: { idleMs: 15 * 60_000, wallMs: 90 * 60_000, graceAfterFinalMs: 30_000 },
    });
  });
});

describe("gemini's quota errors", () => {
  it("a spent daily quota is the gemini/daily window, rejected (its words name no reset)", () => {
    const facts = firstFacts(gemini, recording("gemini", "quota"), (f) => f.final !== undefined);
    expect(facts.error?.kind).toBe("quota");
    expect(facts.quota).toEqual([
      {
        limit: "gemini",
        window: "daily",
        usedPercent: null,
        windowMinutes: 1440,
        resetsAt: null,
        status: "rejected",
      },
    ]);
  });

  it("a daily quota whose words name a delay resets that long after the result's own time", () => {
    const result = JSON.stringify({
      type: "result",
      timestamp: "2026-12-06T19:00:00.000Z",
      status: "error",
      error: {
        message:
          "[API Error: You have exhausted your daily quota on this model.\nSuggested retry after 3600s.]",
      },
    });
    expect(gemini.parse(result).quota?.[0]?.resetsAt).toBe("2026-12-06T20:00:00.000Z");
  });

  it("reads the reason and the retry delay of a quota error's dump on stderr", () => {
    const reason = gemini.parseStderr?.("  reason: 'INSUFFICIENT_G1_CREDITS_BALANCE',");
    expect(reason?.error?.kind).toBe("quota");
    expect(reason?.progress).toBe(false);
    const delay = gemini.parseStderr?.("  retryDelayMs: 7200000,");
    expect(delay?.error?.retryAfter).toEqual({ delayMs: 7_200_000, fromMs: null });
    expect(delay?.error?.kind).toBeNull();
    for (const odd of [
      "  retryDelayMs: undefined,",
      "  reason: undefined,",
      `  retryDelayMs: ${"9".repeat(60)},`,
    ]) {
      expect(gemini.parseStderr?.(odd)).toEqual(NEUTRAL);
    }
  });

  it("a credits error ends quota, back when the dump's delay has passed since the end", () => {
    const rec = recording("gemini", "credits-g1");
    const got = gemini.finalize(summarize(gemini, rec), {
      reason: "exited",
      code: 173,
      signal: null,
      endedAtMs: Date.parse("2026-12-06T19:00:00.000Z"),
    });
    expect(got.failure).toMatchObject({ kind: "quota", retryAfter: "2026-12-06T21:00:00.000Z" });
  });
});
