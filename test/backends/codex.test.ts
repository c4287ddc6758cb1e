import { describe, expect, it } from "vitest";
import { codexBackend as codex } from "../../src/backends/codex.js";
import { oneLine } from "../../src/backends/line-parsing.js";
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

describeRecordings(codex, "codex", {
  // x-codex-* headers on the answer: exec --json says nothing of them (the rollout does).
  "window-text": {
    ends: "exited",
    at: 0.4,
    status: "ok",
    kind: null,
    tokens: { input: 10, cached: 0, output: 3 },
    models: { "mock-model": null },
    costUsd: null,
    costSource: null,
    reply: "LIVE-OK hi",
    error: null,
  },
  // A 429 usage_limit_reached: quota; the time to come back is in the rollout (codex-quota.test.ts).
  "usage-limit": {
    ends: "exited",
    at: 0.3,
    status: "limit",
    kind: "quota",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 8:21 PM.",
  },
  always429: {
    ends: "exited",
    at: 1.2,
    status: "limit",
    kind: "rate-limit",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "exceeded retry limit, last status: 429 Too Many Requests",
  },
  always500: {
    ends: "provider-unavailable",
    at: 10.6,
    status: "limit",
    kind: "provider-down",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "We’re currently experiencing high demand, which may cause temporary errors.",
  },
  always529: {
    ends: "provider-unavailable",
    at: 10.7,
    status: "limit",
    kind: "provider-down",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "unexpected status 529 <unknown status code>: mockllm: overloaded",
  },
  auth401: {
    ends: "provider-unavailable",
    at: 0.3,
    status: "failed",
    kind: "auth",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "unexpected status 401 Unauthorized: Incorrect API key provided: dummy. You can find your API key at https://platform.openai.com/account/api-keys. (mockllm-auth-7f3)",
  },
  badrequest400: {
    ends: "exited",
    at: 0.4,
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
    at: 0.4,
    status: "failed",
    kind: "context",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.",
  },
  forbidden403: {
    ends: "provider-unavailable",
    at: 0.2,
    status: "failed",
    kind: "auth",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "unexpected status 403 Forbidden: You are not allowed to sample from this model (mockllm-forbidden-2c9)",
  },
  hang: {
    ends: "idle-timeout",
    at: 900.7,
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
    at: 0.3,
    status: "failed",
    kind: "model",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "The model `mock-model` does not exist or you do not have access to it. (mockllm-model-4e2)",
  },
  orphan: {
    ends: "exited",
    at: 0.7,
    status: "ok",
    kind: null,
    tokens: { input: 20273, cached: 0, output: 36 },
    models: { "mock-model": null },
    costUsd: null,
    costSource: null,
    reply:
      "Left a background sleep: Chunk ID: 7e6947\nWall time: 0.0320 seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\nstarted-bg\n",
    error: null,
  },
  "orphan-check": {
    ends: "exited",
    at: 2.9,
    status: "ok",
    kind: null,
    tokens: { input: 30604, cached: 0, output: 61 },
    models: { "mock-model": null },
    costUsd: null,
    costSource: null,
    reply:
      "Second command saw: Chunk ID: e79650\nWall time: 0.0553 seconds\nProcess exited with code 0\nOriginal token count: 4\nOutput:\nno-sleep-left\n",
    error: null,
  },
  quota: {
    ends: "exited",
    at: 0.3,
    status: "limit",
    kind: "quota",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "Quota exceeded. Check your plan and billing details.",
  },
  "ratelimit-long": {
    ends: "provider-unavailable",
    at: 180.3,
    status: "limit",
    kind: "rate-limit",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "exceeded retry limit, last status: 429 Too Many Requests",
  },
  "resume-bogus": {
    ends: "exited",
    at: 0.2,
    status: "failed",
    kind: "resume",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error:
      "thread/resume: thread/resume failed: no rollout found for thread id 7d4e1c2a-0b3f-4a5e-9c8d-2f1e0a9b8c7d (code -32600)",
  },
  "retry-then-ok": {
    ends: "exited",
    at: 1,
    status: "ok",
    kind: null,
    tokens: { input: 10084, cached: 0, output: 14 },
    models: { "mock-model": null },
    costUsd: null,
    costSource: null,
    reply: "Recovered after 2 errors.",
    error: null,
  },
  text: {
    ends: "exited",
    at: 0.4,
    status: "ok",
    kind: null,
    tokens: { input: 10079, cached: 0, output: 12 },
    models: { "mock-model": null },
    costUsd: null,
    costSource: null,
    reply: "Hello from mockllm.",
    error: null,
  },
  tool2: {
    ends: "exited",
    at: 3.8,
    status: "ok",
    kind: null,
    tokens: { input: 20263, cached: 0, output: 29 },
    models: { "mock-model": null },
    costUsd: null,
    costSource: null,
    reply:
      "Done. The command printed: Chunk ID: 27e3e2\nWall time: 3.0096 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nhi\n",
    error: null,
  },
  "unknown-flag": {
    ends: "exited",
    at: 0.1,
    status: "failed",
    kind: "cli",
    tokens: { input: 0, cached: 0, output: 0 },
    models: {},
    costUsd: null,
    costSource: null,
    reply: null,
    error: "error: unexpected argument '--no-such-flag' found",
  },
});

describe("codex line facts", () => {
  it("names the thread from thread.started", () => {
    const facts = codex.parse(recording("codex", "text").stdout[0] ?? "");
    expect(facts).toMatchObject({ progress: true, thread: "01a2264d-a96b-7c23-b4e9-0484292c91b3" });
  });

  it("opens a command at item.started and closes it at item.completed of the same item id", () => {
    const rec = recording("codex", "tool2");
    expect(opened(codex, rec)).toEqual([{ id: "item_1", label: "$ sleep 3; echo hi" }]);
    expect(firstFacts(codex, rec, (f) => f.toolsClosed !== undefined).toolsClosed).toEqual(["item_1"]);
    expect(leftOpen(codex, recording("codex", "orphan-check"))).toEqual([]);
  });

  it("labels a command by what ran inside bash -lc, single- or double-quoted", () => {
    expect(opened(codex, recording("codex", "orphan-check")).map((t) => t.label)).toEqual([
      "$ sleep 1000 > /dev/null 2>&1 & echo started-bg pid=$!",
      `$ ${oneLine("ps -eo pid,ppid,pgid,sid,cmd | grep '[s]leep 1000' || echo no-sleep-left")}`,
    ]);
  });

  it("does not take the leading item of type error (unknown model metadata) as a tool or an error", () => {
    const facts = codex.parse(recording("codex", "text").stdout[1] ?? "");
    expect(facts).toEqual({ progress: true });
  });

  it("reads 'Reconnecting... n/m' as a retry with attempt and maximum, not progress", () => {
    const facts = codex.parse(recording("codex", "always500").stdout[4] ?? "");
    expect(facts).toMatchObject({ progress: false, retry: { attempt: 2, max: 5 }, describe: "retrying 2/5" });
    expect(summarize(codex, recording("codex", "always529")).retries).toBe(5);
  });

  it("reads turn.completed as the final event with its usage", () => {
    const facts = firstFacts(codex, recording("codex", "tool2"), (f) => f.final !== undefined);
    // The thread's total: counted only when nothing finer (its rollout) was.
    expect(facts).toMatchObject({
      final: { isError: false, message: null },
      usage: oneUse("thread", { input: 20263, output: 29 }),
    });
  });

  const rolloutRecord = (responseId: string, usage: Record<string, unknown>) =>
    JSON.stringify({
      timestamp: "2026-12-01T11:17:45.474Z",
      ordinal: 10,
      type: "token_usage_record",
      payload: { thread_id: "01a23153-30b1-7893-bf7c-c013ef717699", response_id: responseId, usage },
    });

  it("reads each response's usage from the rollout's token_usage_record, and the model from turn_context", () => {
    const log = codex.usageLog;
    const turn = '{"timestamp":"2026-12-01T11:17:45.338Z","type":"turn_context","payload":{"model":"gpt-5"}}';
    expect(log?.parse(turn)).toEqual({ at: "2026-12-01T11:17:45.338Z", model: "gpt-5" });
    const record = rolloutRecord("resp_1", {
      input_tokens: 1200,
      cached_input_tokens: 1000,
      cache_write_input_tokens: 0,
      output_tokens: 34,
      reasoning_output_tokens: 12,
      total_tokens: 1234,
    });
    expect(log?.parse(record)).toEqual({
      at: "2026-12-01T11:17:45.474Z",
      facts: {
        usage: oneUse(
          "message",
          { input: 1200, cachedInput: 1000, output: 34, reasoning: 12 },
          { key: "resp_1" },
        ),
      },
    });
    // Everything else of the rollout (session_meta, response items, other events) carries no usage.
    expect(log?.parse('{"type":"response_item","payload":{"type":"message"}}')).toBeNull();
    expect(log?.parse(rolloutRecord("resp_2", { input_tokens: -1 }))?.facts).toEqual({
      usageIgnored: "input_tokens is negative (-1)",
    });
  });

  it("finds the rollout of a thread under CODEX_HOME's sessions, newest day first", () => {
    const thread = "01a23153-30b1-7893-bf7c-c013ef717699";
    const tree: Record<string, string[]> = {
      "/c/sessions": ["2026", "2025"],
      "/c/sessions/2026": ["11", "12"],
      "/c/sessions/2026/12": ["01"],
      "/c/sessions/2026/12/01": ["rollout-2026-12-01T10-00-00-other.jsonl"],
      "/c/sessions/2026/11": ["30"],
      "/c/sessions/2026/11/30": [`rollout-2026-11-30T11-17-45-${thread}.jsonl`],
    };
    const context = {
      env: { CODEX_HOME: "/c" },
      listDir: (p: string) => tree[p] ?? [],
      firstLine: () => null,
    };
    expect(codex.usageLog?.locate(thread, context)).toBe(
      `/c/sessions/2026/11/30/rollout-2026-11-30T11-17-45-${thread}.jsonl`,
    );
    expect(codex.usageLog?.locate("01a23153-0000-7893-bf7c-c013ef717699", context)).toBeNull();
  });

  it("bills its model_provider (openai by default) for -m, else -c model=…, else config.toml's model", () => {
    const toml = 'model = "gpt-5-codex"\nmodel_provider = "azure"\n[model_providers.azure]\nmodel = "x"\n';
    const billing = (args: string[], config: string | null = null) =>
      codex.billing?.({
        args,
        env: { CODEX_HOME: "/c" },
        readText: (f) => (f === "/c/config.toml" ? config : null),
      });
    expect(billing(["exec", "-m", "gpt-5", "-"])).toEqual({ provider: "openai", model: "gpt-5" });
    expect(billing(["exec", "-c", 'model="o3"', "-"])).toEqual({ provider: "openai", model: "o3" });
    expect(billing(["exec", "-"], toml)).toEqual({ provider: "azure", model: "gpt-5-codex" });
    expect(billing(["exec", "-"])).toEqual({ provider: "openai", model: null });
  });

  it.each([
    ["auth401", { attempt: 1, max: 5, status: 401, kind: "auth" }],
    ["forbidden403", { attempt: 1, max: 5, status: 403, kind: "auth" }],
    ["ratelimit-long", { attempt: 1, max: 5, status: 429, kind: "rate-limit" }],
    ["always529", { attempt: 1, max: 5, status: 529, kind: "provider-down" }],
    ["always500", { attempt: 1, max: 5, status: null, kind: "provider-down" }],
  ] as const)("reads the status and kind of the %s stream's first retry", (scenario, retry) => {
    expect(firstFacts(codex, recording("codex", scenario), (f) => f.retry !== undefined).retry).toMatchObject(
      retry,
    );
  });

  it("keeps the provider's words of a retry, without the request URL", () => {
    const facts = firstFacts(codex, recording("codex", "auth401"), (f) => f.retry !== undefined);
    expect(facts.retry?.message).toBe(
      "unexpected status 401 Unauthorized: Incorrect API key provided: dummy. You can find your API key at https://platform.openai.com/account/api-keys. (mockllm-auth-7f3)",
    );
  });

  it.each([
    ["auth401", 401, "auth", "provider"],
    ["always429", 429, "rate-limit", "provider"],
    ["always529", 529, "provider-down", "provider"],
    ["quota", null, "quota", "cli"],
    ["model404", null, "model", "cli"],
    ["context400", null, "context", "cli"],
    ["badrequest400", null, "request", "provider"],
  ] as const)(
    "reads the %s stream's turn.failed as a failed final event proving its kind",
    (scenario, status, kind, words) => {
      const facts = firstFacts(codex, recording("codex", scenario), (f) => f.final !== undefined);
      expect(facts).toMatchObject({ final: { isError: true }, error: { status, kind, words } });
    },
  );

  it("reads the provider's message out of a raw JSON error body", () => {
    const facts = firstFacts(codex, recording("codex", "badrequest400"), (f) => f.final !== undefined);
    expect(facts.final?.message).toBe(
      "Unsupported parameter: 'temperature' is not supported with this model. (mockllm-badreq-1a8)",
    );
  });

  it("never reads a retry line as an error", () => {
    expect(stdoutFacts(codex, recording("codex", "always500")).filter((f) => f.retry && f.error)).toEqual([]);
  });

  it("gives as the reply every agent message after the last command, in order", () => {
    const lines = [
      '{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"I will run the tests."}}',
      '{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"npm test"}}',
      '{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"npm test"}}',
      '{"type":"item.completed","item":{"id":"i2","type":"agent_message","text":"## Report\\n\\nAll 12 tests pass."}}',
      '{"type":"item.completed","item":{"id":"i3","type":"reasoning","text":"wrap up"}}',
      '{"type":"item.completed","item":{"id":"i4","type":"agent_message","text":"Done."}}',
      '{"type":"turn.completed","usage":{}}',
    ];
    const summary = summarize(codex, { ...recording("codex", "text"), stdout: lines, stderr: [] });
    expect(summary.reply).toBe("## Report\n\nAll 12 tests pass.\n\nDone.");
  });
});

describe("codex stderr", () => {
  it.each([
    ["resume-bogus", "resume"],
    ["unknown-flag", "cli"],
  ] as const)("reads the %s stream's error line as a %s failure, still progress", (scenario, kind) => {
    const facts = recording("codex", scenario).stderr.map((line) => codex.parseStderr?.(line));
    const errors = facts.filter((f) => f?.error !== undefined);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ progress: true, error: { kind } });
  });

  it("takes its other lines as progress", () => {
    expect(codex.parseStderr?.("Reading additional input from stdin...")).toEqual({ progress: true });
  });
});

describe("codex threads", () => {
  it("accepts the UUID of thread.started and refuses anything else, naming the form", () => {
    expect(codex.checkThread?.("01a22d07-1915-73e1-aea5-ac3876195192")).toBeNull();
    expect(codex.checkThread?.("ses_dd2f8c1b9ffe61TIhHsywNFVw1")).toMatch(/a codex thread is a UUID/);
    expect(codex.checkThread?.("01a22d07-1915-73e1-aea5")).not.toBeNull();
  });
});

describe("codex plan", () => {
  it("runs codex exec --json reading the brief from stdin with '-', never from argv", () => {
    const plan = codex.plan(planRequest());
    expect(plan).toEqual({
      cmd: "/opt/bin/agent",
      args: ["exec", "--json", "--skip-git-repo-check", "-"],
      env: {},
      stdin: "brief",
    });
    expect(plan.args).not.toContain(BRIEF_PATH);
  });

  it("resumes a thread with exec resume <thread> and passes model, effort and extra arguments", () => {
    const plan = codex.plan(
      planRequest({ thread: "th-1", model: "gpt-5", effort: "high", extraArgs: ["--oss"] }),
    );
    expect(plan.args).toEqual([
      "exec",
      "resume",
      "--json",
      "--skip-git-repo-check",
      "-m",
      "gpt-5",
      "-c",
      'model_reasoning_effort="high"',
      "--oss",
      "th-1",
      "-",
    ]);
  });

  it.each([
    ["read-only", ["--sandbox", "read-only"]],
    ["workspace-write", ["--sandbox", "workspace-write"]],
    ["full", ["--dangerously-bypass-approvals-and-sandbox"]],
  ] as const)("maps access %s to codex's sandbox flags", (access, flags) => {
    expect(codex.plan(planRequest({ access })).args.slice(3, -1)).toEqual(flags);
  });

  it.each(["read-only", "workspace-write", "full", null] as const)(
    "inside catherd's sandbox, leaves its own sandbox out at access %s (the sandbox enforces it)",
    (access) => {
      expect(codex.plan(planRequest({ access, sandboxed: true })).args.slice(3, -1)).toEqual([
        "--dangerously-bypass-approvals-and-sandbox",
      ]);
      // `exec resume` takes the same (it has no --sandbox).
      expect(codex.plan(planRequest({ access, sandboxed: true, thread: "th-1" })).args).toContain(
        "--dangerously-bypass-approvals-and-sandbox",
      );
    },
  );
});
