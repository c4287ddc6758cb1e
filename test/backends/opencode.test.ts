import { describe, expect, it } from "vitest";
import { opencodeBackend as opencode } from "../../src/backends/opencode.js";
import {
  BRIEF_PATH,
  describeRecordings,
  firstFacts,
  planRequest,
  recording,
  stdoutFacts,
  summarize,
} from "./recorded.js";

const ZERO = { input: 0, cached: 0, output: 0 };

describeRecordings(opencode, "opencode", {
  text: {
    status: "ok",
    tokens: { input: 7688, cached: 0, output: 12 },
    costUsd: 0,
    reply: "Hello from mockllm.",
    error: null,
  },
  tool2: {
    status: "ok",
    tokens: { input: 7688 + 7757, cached: 0, output: 11 + 18 },
    costUsd: 0,
    reply: "Done. The command printed: hi\n",
    error: null,
  },
  "retry-then-ok": {
    status: "ok",
    tokens: { input: 7688, cached: 0, output: 14 },
    costUsd: 0,
    reply: "Recovered after 2 errors.",
    error: null,
  },
  "orphan-check": {
    status: "ok",
    tokens: { input: 7688 + 7771 + 7863, cached: 0, output: 20 + 25 + 16 },
    costUsd: 0,
    reply: "Second command saw: 15970     1 15969 15969 sleep 1000\n",
    error: null,
  },
  always500: {
    status: "failed",
    tokens: ZERO,
    costUsd: null,
    reply: null,
    error: "APIError 500: mockllm: internal error",
  },
  always429: {
    status: "limit",
    tokens: ZERO,
    costUsd: null,
    reply: null,
    error: "APIError 429: mockllm: rate limited",
  },
  hang: { status: "failed", tokens: ZERO, costUsd: null, reply: null, error: "exited: ended by SIGTERM" },
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
    expect(steps.map((f) => f.usage)).toEqual([
      { input: 7688, cached: 0, output: 11 },
      { input: 7757, cached: 0, output: 18 },
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
      usage: { input: 3150, cached: 3000, output: 50 },
      costUsd: 0.25,
      final: { isError: false, message: null },
    });
  });

  it("sums each step's cost", () => {
    const step = (cost: number) =>
      JSON.stringify({ type: "step_finish", part: { reason: "tool-calls", tokens: {}, cost } });
    const got = summarize(opencode, {
      stdout: [step(0.5), step(0.25)],
      stderr: [],
      meta: { scenario: "x", exit_code: 0, signal: null },
    });
    expect(got.costUsd).toBe(0.75);
  });

  it("reads the error line as a failed final event, a limit when it is a 429", () => {
    const limited = opencode.parse(recording("opencode", "always429").stdout[0] ?? "");
    expect(limited).toMatchObject({
      final: { isError: true, message: "APIError 429: mockllm: rate limited" },
      limit: true,
    });
    const failed = opencode.parse(recording("opencode", "always500").stdout[0] ?? "");
    expect(failed).toMatchObject({ final: { isError: true }, limit: false });
  });

  it("takes the last text part as the reply", () => {
    const replies = stdoutFacts(opencode, recording("opencode", "tool2")).flatMap((f) =>
      f.reply ? [f.reply] : [],
    );
    expect(replies).toEqual([{ text: "Done. The command printed: hi\n", mode: "replace" }]);
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
