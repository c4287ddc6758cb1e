import { describe, expect, it } from "vitest";
import { codexBackend as codex } from "../../src/backends/codex.js";
import { oneLine } from "../../src/backends/common.js";
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
const HIGH_DEMAND = "We’re currently experiencing high demand, which may cause temporary errors.";
const OVERLOADED =
  "unexpected status 529 <unknown status code>: mockllm: overloaded, url: http://127.0.0.1:PORT/s/always529@codex-mx1jp974/v1/responses";

describeRecordings(codex, "codex", {
  text: {
    status: "ok",
    tokens: { input: 10079, cached: 0, output: 12 },
    costUsd: null,
    reply: "Hello from mockllm.",
    error: null,
  },
  tool2: {
    status: "ok",
    tokens: { input: 20263, cached: 0, output: 29 },
    costUsd: null,
    reply:
      "Done. The command printed: Chunk ID: 27e3e2\nWall time: 3.0096 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nhi\n",
    error: null,
  },
  "retry-then-ok": {
    status: "ok",
    tokens: { input: 10084, cached: 0, output: 14 },
    costUsd: null,
    reply: "Recovered after 2 errors.",
    error: null,
  },
  orphan: {
    status: "ok",
    tokens: { input: 20273, cached: 0, output: 36 },
    costUsd: null,
    reply:
      "Left a background sleep: Chunk ID: 7e6947\nWall time: 0.0320 seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\nstarted-bg\n",
    error: null,
  },
  "orphan-check": {
    status: "ok",
    tokens: { input: 30604, cached: 0, output: 61 },
    costUsd: null,
    reply:
      "Second command saw: Chunk ID: e79650\nWall time: 0.0553 seconds\nProcess exited with code 0\nOriginal token count: 4\nOutput:\nno-sleep-left\n",
    error: null,
  },
  always500: { status: "failed", tokens: ZERO, costUsd: null, reply: null, error: HIGH_DEMAND },
  always529: { status: "failed", tokens: ZERO, costUsd: null, reply: null, error: OVERLOADED },
  always429: {
    status: "limit",
    tokens: ZERO,
    costUsd: null,
    reply: null,
    error: "exceeded retry limit, last status: 429 Too Many Requests",
  },
  hang: { status: "failed", tokens: ZERO, costUsd: null, reply: null, error: "exited: ended by SIGTERM" },
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
    expect(facts).toMatchObject({
      final: { isError: false, message: null },
      usage: { input: 20263, cached: 0, output: 29 },
    });
  });

  it("reads turn.failed as a failed final event, a limit when it names a 429", () => {
    const limited = firstFacts(codex, recording("codex", "always429"), (f) => f.final !== undefined);
    expect(limited).toMatchObject({ final: { isError: true }, limit: true });
    const failed = firstFacts(codex, recording("codex", "always529"), (f) => f.final !== undefined);
    expect(failed).toMatchObject({ final: { isError: true }, limit: false });
  });

  it("never marks a retry line as a limit", () => {
    expect(stdoutFacts(codex, recording("codex", "always500")).filter((f) => f.retry && f.limit)).toEqual([]);
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
});
