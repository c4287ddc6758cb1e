import { describe, expect, it } from "vitest";
import { opencodeBackend as opencode } from "../../src/backends/opencode.js";
import { accounts, ZERO_COUNTS } from "../../src/domain/spend/usage.js";
import {
  BRIEF_PATH,
  describeRecordings,
  firstFacts,
  oneUse,
  planRequest,
  recording,
  stdoutFacts,
  summarize,
} from "./recorded.js";

describeRecordings(opencode, "opencode", {
  always429: {
    ends: "exited",
    at: 85.8,
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
    ends: "exited",
    at: 81.6,
    status: "limit",
    kind: "provider-down",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "mockllm: internal error",
  },
  auth401: {
    ends: "exited",
    at: 3.3,
    status: "failed",
    kind: "auth",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "Incorrect API key provided: dummy. You can find your API key at https://platform.openai.com/account/api-keys. (mockllm-auth-7f3)",
  },
  badrequest400: {
    ends: "exited",
    at: 4.2,
    status: "failed",
    kind: "request",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "Unsupported parameter: 'temperature' is not supported with this model. (mockllm-badreq-1a8)",
  },
  context400: {
    ends: "exited",
    at: 4,
    status: "failed",
    kind: "context",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages. (mockllm-context-8a6)",
  },
  "context400-compactok": {
    ends: "provider-unavailable",
    at: 4.8,
    status: "failed",
    kind: "context",
    tokens: { input: 43227, cached: 0, output: 392 },
    models: { "mock-model": null },
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages. (mockllm-context-8a6)",
  },
  forbidden403: {
    ends: "exited",
    at: 3.2,
    status: "failed",
    kind: "auth",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "You are not allowed to sample from this model (mockllm-forbidden-2c9)",
  },
  hang: {
    ends: "idle-timeout",
    at: 900,
    status: "timeout",
    kind: "timeout",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "no output for 15m (--idle 15m)",
  },
  model404: {
    ends: "exited",
    at: 3.1,
    status: "failed",
    kind: "model",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "The model `mock-model` does not exist or you do not have access to it. (mockllm-model-4e2)",
  },
  "orphan-check": {
    ends: "exited",
    at: 5.6,
    status: "ok",
    kind: null,
    tokens: { input: 23322, cached: 0, output: 61 },
    models: { "mock-model": null },
    costUsd: null,
    costSource: null,
    reply: "Second command saw: 15970     1 15969 15969 sleep 1000\n",
    error: null,
  },
  quota: {
    ends: "exited",
    at: 73.4,
    status: "limit",
    kind: "quota",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors. (mockllm-quota-5d1)",
  },
  "ratelimit-long": {
    ends: "idle-timeout",
    at: 900,
    status: "timeout",
    kind: "timeout",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "no output for 15m (--idle 15m)",
  },
  "resume-bogus": {
    ends: "exited",
    at: 2.2,
    status: "failed",
    kind: "resume",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "Session not found",
  },
  "retry-then-ok": {
    ends: "exited",
    at: 11.7,
    status: "ok",
    kind: null,
    tokens: { input: 7688, cached: 0, output: 14 },
    models: { "mock-model": null },
    costUsd: null,
    costSource: null,
    reply: "Recovered after 2 errors.",
    error: null,
  },
  text: {
    ends: "exited",
    at: 5.1,
    status: "ok",
    kind: null,
    tokens: { input: 7688, cached: 0, output: 12 },
    models: { "mock-model": null },
    costUsd: null,
    costSource: null,
    reply: "Hello from mockllm.",
    error: null,
  },
  tool2: {
    ends: "exited",
    at: 10.5,
    status: "ok",
    kind: null,
    tokens: { input: 15445, cached: 0, output: 29 },
    models: { "mock-model": null },
    costUsd: null,
    costSource: null,
    reply: "Done. The command printed: hi\n",
    error: null,
  },
  "unknown-flag": {
    ends: "exited",
    at: 0.8,
    status: "failed",
    kind: "cli",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "exit code 1",
  },
});

describe("opencode line facts", () => {
  it("names the thread from the sessionID every line carries", () => {
    const rec = recording("opencode", "tool2");
    const threads = new Set(stdoutFacts(opencode, rec).map((f) => f.thread));
    expect([...threads]).toEqual(["ses_dd9b11935ffe5YN3Nk0a05iHwo"]);
    expect(summarize(opencode, recording("opencode", "always429")).thread).toBe(
      "ses_dd9af1b39ffeRV4iSB49geNie4",
    );
  });

  it("reads a tool_use line as progress with a description, opening and closing nothing", () => {
    const facts = firstFacts(
      opencode,
      recording("opencode", "tool2"),
      (f) => f.describe?.startsWith("$") === true,
    );
    expect(facts.describe).toBe("$ sleep 3; echo hi");
    expect(facts.toolsOpened).toBeUndefined();
    expect(facts.toolsClosed).toBeUndefined();
    expect(stdoutFacts(opencode, recording("opencode", "orphan-check")).some((f) => f.toolsOpened)).toBe(
      false,
    );
  });

  it("reads a step_finish with reason stop as the final event, and one with tool-calls as a step", () => {
    const steps = stdoutFacts(opencode, recording("opencode", "tool2")).filter((f) => f.usage !== undefined);
    expect(steps.map((f) => f.final)).toEqual([undefined, { isError: false, message: null }]);
    // A cost of 0 for steps that used tokens is opencode's "no price known" (its catalogue has none for
    // the mock's model): no figure.
    expect(steps.map((f) => f.usage)).toEqual([
      oneUse("add", { input: 7688, output: 11 }),
      oneUse("add", { input: 7757, output: 18 }),
    ]);
  });

  it("adds cache reads and writes to input and reasoning to output, which opencode subtracts", () => {
    const line = JSON.stringify({
      type: "step_finish",
      sessionID: "ses_1",
      part: {
        reason: "stop",
        tokens: { total: 4000, input: 100, output: 20, reasoning: 30, cache: { write: 50, read: 3000 } },
        cost: 0.25,
      },
    });
    expect(opencode.parse(line)).toMatchObject({
      usage: oneUse(
        "add",
        { input: 3150, cachedInput: 3000, cacheWrite: 50, output: 50, reasoning: 30 },
        { costUsd: 0.25 },
      ),
      final: { isError: false, message: null },
    });
  });

  it("sums each step's tokens and cost; a step that cost 0 for its tokens gives no figure", () => {
    const step = (cost: number, input = 10) =>
      JSON.stringify({ type: "step_finish", part: { reason: "tool-calls", tokens: { input }, cost } });
    const summed = summarize(opencode, {
      ...recording("opencode", "text"),
      stdout: [step(0.5), step(0.25), step(0, 0)],
      stderr: [],
    });
    expect(accounts(summed.usage)).toEqual([
      { model: null, tokens: { ...ZERO_COUNTS, input: 20 }, reportedUsd: 0.75, unreported: ZERO_COUNTS },
    ]);
    const unpriced = summarize(opencode, { ...recording("opencode", "text"), stdout: [step(0)], stderr: [] });
    expect(accounts(unpriced.usage)[0]?.unreported).toEqual({ ...ZERO_COUNTS, input: 10 });
  });

  it("ignores a step whose tokens do not add up, saying why", () => {
    const line = JSON.stringify({ type: "step_finish", part: { reason: "stop", tokens: { input: -4 } } });
    expect(opencode.parse(line)).toMatchObject({ usageIgnored: "input is negative (-4)" });
    expect(opencode.parse(line).usage).toBeUndefined();
  });

  it("bills the provider and model of --model, else of its configuration", () => {
    const billing = (args: string[], env: Record<string, string> = {}) =>
      opencode.billing?.({ args, env, readText: () => null });
    expect(billing(["run", "--model", "anthropic/claude-sonnet-4-5"])).toEqual({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
    });
    expect(billing(["run"], { OPENCODE_CONFIG_CONTENT: JSON.stringify({ model: "openai/gpt-5" }) })).toEqual({
      provider: "openai",
      model: "gpt-5",
    });
    expect(billing(["run"])).toEqual({ provider: null, model: null });
  });

  it("reads the error line as a failed final event in the provider's words", () => {
    const limited = opencode.parse(recording("opencode", "always429").stdout[0] ?? "");
    expect(limited).toMatchObject({
      final: { isError: true, message: "mockllm: rate limited" },
      error: { status: 429, kind: "rate-limit", words: "provider" },
    });
  });

  it.each([
    ["auth401", 401, "auth"],
    ["forbidden403", 403, "auth"],
    ["quota", 429, "quota"],
    ["model404", 404, "model"],
    ["context400", null, "context"],
    ["badrequest400", 400, "request"],
    ["always500", 500, "provider-down"],
  ] as const)("reads the %s stream's error line as proving its kind", (scenario, status, kind) => {
    expect(opencode.parse(recording("opencode", scenario).stdout[0] ?? "").error).toMatchObject({
      status,
      kind,
    });
  });

  it("reads a Retry-After header of the error as a delay from the line's time", () => {
    const line = JSON.stringify({
      type: "error",
      timestamp: 1_796_051_780_985,
      error: {
        name: "APIError",
        data: { message: "slow down", statusCode: 429, responseHeaders: { "retry-after": "3600" } },
      },
    });
    expect(opencode.parse(line).error?.retryAfter).toEqual({ delayMs: 3_600_000, fromMs: 1_796_051_780_985 });
  });

  it("reads a compaction's synthetic text as the session going on, not an answer", () => {
    const facts = stdoutFacts(opencode, recording("opencode", "context400-compactok"));
    const goingOn = facts.filter((f) => f.continues === true);
    expect(goingOn.length).toBeGreaterThan(10);
    expect(goingOn.every((f) => f.reply?.text === "")).toBe(true);
  });

  it("takes the text part after the last tool call as the reply", () => {
    const replies = stdoutFacts(opencode, recording("opencode", "tool2")).flatMap((f) =>
      f.reply ? [f.reply] : [],
    );
    expect(replies).toEqual([
      { text: "", mode: "replace" },
      { text: "Done. The command printed: hi\n", mode: "message" },
    ]);
  });

  it("gives as the reply every text part after the last tool call, in order", () => {
    const text = (t: string) => JSON.stringify({ type: "text", part: { type: "text", text: t } });
    const tool = JSON.stringify({
      type: "tool_use",
      part: { tool: "bash", state: { status: "completed", input: { command: "ls" } } },
    });
    const got = summarize(opencode, {
      ...recording("opencode", "text"),
      stdout: [text("Looking."), tool, text("## Report"), text("Done.")],
      stderr: [],
    });
    expect(got.reply).toBe("## Report\n\nDone.");
  });
});

describe("opencode stderr and threads", () => {
  it("reads a coloured 'Error: Session not found' as a resume failure, still progress", () => {
    const [line] = recording("opencode", "resume-bogus").stderr;
    expect(opencode.parseStderr?.(line ?? "")).toMatchObject({
      progress: true,
      error: { kind: "resume", message: "Session not found" },
    });
    expect(opencode.parseStderr?.("opencode run [message..]")).toEqual({ progress: true });
  });

  it("accepts an opencode session id as a thread and refuses anything else", () => {
    expect(opencode.checkThread?.("ses_dd2f8c1b9ffe61TIhHsywNFVw1")).toBeNull();
    expect(opencode.checkThread?.("a3a8eeed-ad4a-4d14-94ae-610dc038b311")).toMatch(
      /an opencode thread is a session id/,
    );
    expect(opencode.checkThread?.("ses_")).not.toBeNull();
  });
});

describe("opencode plan", () => {
  it("runs opencode run --format json with the brief on stdin, never in argv", () => {
    const plan = opencode.plan(planRequest());
    expect(plan).toEqual({
      cmd: "/opt/bin/agent",
      args: ["run", "--format", "json"],
      env: {},
      stdin: "brief",
    });
    expect(plan.args).not.toContain(BRIEF_PATH);
  });

  it("resumes a session with --session and passes model, effort as --variant, and extra arguments", () => {
    const plan = opencode.plan(
      planRequest({
        thread: "ses_1",
        model: "anthropic/claude-sonnet-4-5",
        effort: "high",
        extraArgs: ["--agent", "build"],
      }),
    );
    expect(plan.args).toEqual([
      "run",
      "--format",
      "json",
      "--session",
      "ses_1",
      "--model",
      "anthropic/claude-sonnet-4-5",
      "--variant",
      "high",
      "--agent",
      "build",
    ]);
  });

  it("denies edits, bash and outside paths for read-only through OPENCODE_PERMISSION", () => {
    const plan = opencode.plan(planRequest({ access: "read-only" }));
    expect(JSON.parse(plan.env.OPENCODE_PERMISSION ?? "{}")).toEqual({
      edit: "deny",
      bash: "deny",
      external_directory: "deny",
    });
    expect(plan.args).toEqual(["run", "--format", "json"]);
  });

  it("allows edits and bash but no outside paths for workspace-write", () => {
    const plan = opencode.plan(planRequest({ access: "workspace-write" }));
    expect(JSON.parse(plan.env.OPENCODE_PERMISSION ?? "{}")).toEqual({
      edit: "allow",
      bash: "allow",
      external_directory: "deny",
    });
  });

  it("auto-approves every request for full access", () => {
    const plan = opencode.plan(planRequest({ access: "full" }));
    expect(plan.args).toEqual(["run", "--format", "json", "--auto"]);
    expect(plan.env).toEqual({});
  });

  it("names its executable, override variable and defaults", () => {
    expect(opencode).toMatchObject({
      id: "opencode",
      defaultBin: "opencode",
      binEnv: "CATHERD_OPENCODE_BIN",
      versionArgs: ["--version"],
      defaults: { idleMs: 15 * 60_000, wallMs: 90 * 60_000, graceAfterFinalMs: 30_000 },
    });
  });
});
