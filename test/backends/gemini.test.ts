import { describe, expect, it } from "vitest";
import { geminiBackend as gemini } from "../../src/backends/gemini.js";
import { NEUTRAL, PROGRESS } from "../../src/domain/facts.js";
import { emptySummary } from "../../src/domain/summary.js";
import { initialWatch, observe } from "../../src/domain/watch.js";
import {
  BRIEF_PATH,
  describeRecordings,
  firstFacts,
  leftOpen,
  opened,
  planRequest,
  recording,
  stdoutFacts,
  summarize,
} from "./recorded.js";

const ZERO = { input: 0, cached: 0, output: 0 };
const parseStderr = gemini.parseStderr ?? (() => PROGRESS);

describeRecordings(gemini, "gemini", {
  text: {
    status: "ok",
    tokens: { input: 11739, cached: 0, output: 12 },
    costUsd: null,
    reply: "Hello from mockllm.",
    error: null,
  },
  tool2: {
    status: "ok",
    tokens: { input: 23597, cached: 0, output: 29 },
    costUsd: null,
    reply:
      "Done. The command printed: <untrusted_context>\nOutput: hi\nProcess Group PGID: 14504\n</untrusted_context>",
    error: null,
  },
  "retry-then-ok": {
    status: "ok",
    tokens: { input: 11748, cached: 0, output: 14 },
    costUsd: null,
    reply: "Recovered after 2 errors.",
    error: null,
  },
  "orphan-check": {
    status: "ok",
    tokens: { input: 35654, cached: 0, output: 61 },
    costUsd: null,
    reply:
      "Second command saw: <untrusted_context>\nOutput: 15906     1 15904 15904 sleep 1000\nProcess Group PGID: 15907\n</untrusted_context>",
    error: null,
  },
  always500: {
    status: "failed",
    tokens: ZERO,
    costUsd: null,
    reply: null,
    error: '[API Error: {"error":{"code":500,"message":"mockllm: internal error","status":"INTERNAL"}}]',
  },
  always429: {
    status: "limit",
    tokens: ZERO,
    costUsd: null,
    reply: null,
    error:
      "[API Error: mockllm: rate limited]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method",
  },
  hang: {
    status: "failed",
    tokens: ZERO,
    costUsd: null,
    reply: null,
    error: "gemini exited without a result event (exit code 0)",
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
      summarize(gemini, { stdout: lines, stderr: [], meta: { scenario: "x", exit_code: 0, signal: null } }),
      {
        reason: "exited",
        code: 0,
        signal: null,
      },
    );
    expect(got).toMatchObject({
      status: "ok",
      reply: "All good.",
      tokens: { input: 5, cached: 1, output: 2 },
    });
  });

  it("reads an error event of severity error as an error, a limit when it names a quota, and a warning as progress", () => {
    const quota = '{"type":"error","severity":"error","message":"Quota exceeded for gemini-2.5-pro"}';
    expect(gemini.parse(quota)).toMatchObject({
      progress: true,
      error: "Quota exceeded for gemini-2.5-pro",
      limit: true,
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
      usage: { input: 23597, cached: 0, output: 29 },
    });
  });

  it("lets result.status decide over the exit codes 244 and 173", () => {
    const failed = firstFacts(gemini, recording("gemini", "always500"), (f) => f.final !== undefined);
    expect(failed.final?.isError).toBe(true);
    expect(failed.limit).toBe(false);
    const limited = firstFacts(gemini, recording("gemini", "always429"), (f) => f.final !== undefined);
    expect(limited.limit).toBe(true);
    const ok = gemini.finalize(summarize(gemini, recording("gemini", "text")), {
      reason: "exited",
      code: 244,
      signal: null,
    });
    expect(ok.status).toBe("ok");
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
    "  cause: { code: 429, message: 'mockllm: rate limited', details: [] },",
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

  it("reads the give-up line as an error, a limit when its wording says so", () => {
    expect(parseStderr("Attempt 10 failed: mockllm: rate limited. Max attempts reached")).toMatchObject({
      progress: true,
      error: "mockllm: rate limited",
      limit: true,
    });
    const last = lines.find((l) => l.includes("Max attempts reached")) ?? "";
    expect(parseStderr(last)).toMatchObject({ progress: true, limit: false });
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
