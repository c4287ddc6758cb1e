import * as fs from "node:fs";
import * as path from "node:path";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dispatchCommand } from "../../src/cli/dispatch-command.js";
import { GUIDE } from "../../src/cli/guide-command.js";
import { argumentName } from "../../src/cli/mcp/input.js";
import type { ResultData } from "../../src/cli/result-command.js";
import { BACKEND_IDS } from "../../src/domain/vocab.js";
import { dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { calls, fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { FAKE_AGENT, reapAll, tempDir } from "../helpers/folders.js";
import { codexLine, fakeDispatch, inProcessSession, type McpSession, scenarioFile } from "../helpers/mcp.js";
import { watchesInode } from "../helpers/mcp-stdio.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

// catherd mcp in this process, through the SDK's own Client over an in-memory transport: the tools call
// the commands of src/cli in this process, and the dispatches they make run under real supervisors.

const dispatched: string[] = [];
let session: McpSession;
let env: NodeJS.ProcessEnv;
const saved = { home: process.env.CATHERD_HOME, run: process.env.CATHERD_RUN };

beforeEach(async () => {
  ({ env } = isolatedHome());
  process.env.CATHERD_HOME = env.CATHERD_HOME;
  process.env.CATHERD_RUN = "";
  session = await inProcessSession();
});

afterEach(async () => {
  await session.close();
  process.env.CATHERD_HOME = saved.home;
  process.env.CATHERD_RUN = saved.run;
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

async function dispatch(args: Record<string, unknown>): Promise<{ name: string; dir: string }> {
  const answer = await session.call("dispatch", args);
  expect(answer.isError, answer.text).toBe(false);
  const d = answer.data.dispatched as { name: string; dispatchId: string; dir: string };
  dispatched.push(d.dispatchId);
  return d;
}

/** What the command line prints with --json for the same question. */
async function cliJson(args: string[]): Promise<unknown> {
  const result = await runCli([...args, "--json"], { env });
  return JSON.parse(result.stdout) as unknown;
}

/** A fake codex that opens a tool call, waits for `go`, then answers `reply`. */
function fakeCodex(name: string, go: string, reply: string, opened: string) {
  return {
    backend: "codex",
    name,
    bin: FAKE_AGENT,
    brief: "Build it.",
    killGrace: "300ms",
    env: [
      `FAKE_AGENT_SCENARIO_FILE=${scenarioFile([
        codexLine({ type: "thread.started", thread_id: "t-1" }),
        codexLine({ type: "turn.started" }),
        codexLine({
          type: "item.started",
          item: { id: "c1", type: "command_execution", command: "cargo build" },
        }),
        { touch: opened },
        { waitFor: go },
        codexLine({
          type: "item.completed",
          item: { id: "c1", type: "command_execution", command: "cargo build", exit_code: 0 },
        }),
        codexLine({ type: "item.completed", item: { id: "m", type: "agent_message", text: reply } }),
        codexLine({ type: "turn.completed", usage: { input_tokens: 10, output_tokens: 2 } }),
        { exit: 0 },
      ])}`,
    ],
  };
}

describe("catherd mcp, in process", () => {
  it("lists the verbs as tools, their input schemas valid JSON Schema made from the commands' flags", async () => {
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "answer",
        "cancel",
        "dispatch",
        "doctor",
        "logs",
        "result",
        "send",
        "show",
        "status",
        "usage",
        "wait",
      ].sort(),
    );
    const validator = new AjvJsonSchemaValidator();
    type Schema = Parameters<typeof validator.getValidator>[0];
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe("object");
      expect(() => validator.getValidator(tool.inputSchema as Schema), tool.name).not.toThrow();
    }
    const dispatchTool = tools.find((t) => t.name === "dispatch");
    const properties = dispatchTool?.inputSchema.properties as Record<string, Record<string, unknown>>;
    // Every flag of `catherd dispatch`, so a flag added there is a tool argument at once.
    for (const flag of Object.keys(dispatchCommand.options))
      expect(properties).toHaveProperty(argumentName(flag));
    expect(properties.backend?.enum).toEqual([...BACKEND_IDS]);
    // maxParallel takes `none` as the flag does; backend is not required (followUp names its own);
    // owns takes a list; briefFile is a path.
    expect(properties.maxParallel?.type).toBe("string");
    expect(dispatchTool?.inputSchema.required).toBeUndefined();
    expect(properties.followUp).toMatchObject({ type: "string" });
    expect(properties.owns).toMatchObject({ type: "array", items: { type: "string" } });
    expect(String(properties.briefFile?.description)).not.toMatch(/stdin|-/);
    expect(String(properties.idle?.description)).toContain("(default: 15m for an agent CLI, 10m for exec)");
    // The caps on spending, from the same table: a model may give them as numbers or as "50k".
    expect(properties.maxTokens?.description).toMatch(/tokens/);
    expect(properties.maxCost?.description).toMatch(/dollars/);
    expect(properties.args).toMatchObject({ type: "array" });
    const check = validator.getValidator((dispatchTool?.inputSchema ?? {}) as Schema);
    expect(check({ backend: "exec", args: ["true"], env: ["A=1"] }).valid).toBe(true);
    expect(check({ backend: "exec", frobnicate: 1 }).valid).toBe(false);
    expect(dispatchTool?.annotations?.readOnlyHint).toBe(false);
    expect(tools.find((t) => t.name === "wait")?.annotations?.readOnlyHint).toBe(true);
    const wait = tools.find((t) => t.name === "wait")?.inputSchema.properties as Record<string, unknown>;
    expect(wait.timeoutS).toMatchObject({ type: "integer", default: 50, maximum: 300 });
    expect(wait).not.toHaveProperty("timeout");
  });

  it("dispatches, waits and reads through tools, with the command line's --json as structuredContent", async () => {
    const d = await dispatch(
      fakeDispatch("worker", [{ out: "compiling" }, { out: "all done" }, { exit: 0 }]),
    );
    const waited = await session.call("wait", { names: ["worker"], timeoutS: 30 });
    expect(waited.isError).toBe(false);
    expect(waited.data).toMatchObject({ records: [{ name: "worker", status: "ok" }], running: [] });
    expect(waited.text).toBe("recorded: worker ok");

    const result = await session.call("result", { name: "worker" });
    expect(result.data).toEqual(await cliJson(["result", "worker"]));
    expect(result.text).toMatch(/^worker \S+ ok /);
    const status = await session.call("status");
    expect(status.data).toEqual(await cliJson(["status"]));
    expect(status.text).toBe("1 dispatches: 1 ok");
    const show = await session.call("show", { name: d.dir });
    expect(show.data).toEqual(await cliJson(["show", d.dir]));

    const logs = await session.call("logs", { name: "worker" });
    expect(logs.data).toEqual(await cliJson(["logs", "worker"]));
    expect(logs.data).toMatchObject({ lines: ["compiling", "all done"] });
    const cursor = (logs.data as { cursor: number }).cursor;
    expect(cursor).toBe(fs.statSync(path.join(d.dir, "events.jsonl")).size);
    expect((await session.call("logs", { name: "worker", tail: 1 })).data).toMatchObject({
      lines: ["all done"],
      cursor,
    });
    expect((await session.call("logs", { name: "worker", since: cursor })).data).toEqual({
      lines: [],
      cursor,
      restarted: false,
    });
    expect((await session.call("logs", { name: "worker", since: 10 })).data).toEqual(
      await cliJson(["logs", "worker", "--since", "10"]),
    );
    expect((await session.call("wait", { names: ["worker"] })).data).toEqual(
      await cliJson(["wait", "worker"]),
    );

    // A new dispatch has new ids: the tool's answer has the shape the command line's has, field by field.
    const viaTool = (await session.call("dispatch", { backend: "exec", name: "again", args: ["true"] })).data;
    const cli = await runCli(
      ["dispatch", "--backend", "exec", "--name", "again-cli", "--json", "--", "true"],
      {
        env,
      },
    );
    const viaCli = JSON.parse(cli.stdout) as { dispatched: Record<string, unknown> };
    const made = viaTool.dispatched as Record<string, unknown>;
    dispatched.push(String(made.dispatchId), String(viaCli.dispatched.dispatchId));
    expect(Object.keys(made).sort()).toEqual(Object.keys(viaCli.dispatched).sort());
    expect(made).toMatchObject({ name: "again", backend: "exec" });
    // Both run `true` under their supervisors: done only once recorded (else the reaper races their exit).
    for (const dir of [made.dir, viaCli.dispatched.dir]) {
      await waitForFile(path.join(String(dir), "record.json"), 30_000);
    }
  });

  it("notifies the client when a dispatch it made is recorded: name, status, the reply's first line; info when ok, warning when not", async () => {
    const go = path.join(tempDir(), "go");
    const opened = path.join(tempDir(), "opened");
    fs.writeFileSync(go, "");
    await dispatch(fakeCodex("noticed", go, "Built it.\nDetails follow.", opened));
    const notice = await waitFor("the logging notification", () => session.notices[0], 30_000);
    expect(notice).toMatchObject({ event: "recorded", name: "noticed", status: "ok", reply: "Built it." });
    expect(session.notices).toHaveLength(1);
    expect(session.levels).toEqual(["info"]);

    await dispatch(fakeDispatch("broken", [{ out: "trying" }, { exit: 3 }]));
    const failed = await waitFor("the second notification", () => session.notices[1], 30_000);
    expect(failed).toMatchObject({ event: "recorded", name: "broken", status: "failed", reply: null });
    expect(session.levels).toEqual(["info", "warning"]);
  });

  it("wait returns a snapshot of a dispatch still running at its timeout, and its record on a later call", async () => {
    const go = path.join(tempDir(), "go");
    const opened = path.join(tempDir(), "opened");
    const d = await dispatch(fakeCodex("builder", go, "built", opened));
    await waitForFile(opened, 20_000);
    // The supervisor writes activity.json at most once a second: wait until it shows the open call.
    await waitFor(
      "activity.json with the open tool call",
      () => {
        try {
          const a = JSON.parse(fs.readFileSync(path.join(d.dir, "activity.json"), "utf8"));
          return a.openToolCalls.length === 1 ? a : undefined;
        } catch {
          return undefined;
        }
      },
      20_000,
    );
    const notYet = await session.call("result", { name: "builder" });
    expect(notYet).toMatchObject({ isError: true, data: { error: { code: "E_NOT_RECORDED" } } });

    const started = Date.now();
    const early = await session.call("wait", { names: ["builder"], timeoutS: 1 });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(1000);
    expect(took).toBeLessThan(4000);
    expect(early.isError).toBe(false);
    expect(early.data).toMatchObject({
      records: [],
      running: [
        {
          name: "builder",
          state: "running",
          doing: "$ cargo build",
          openToolCall: { label: "$ cargo build" },
        },
      ],
    });
    expect(early.text).toBe("none recorded; still running: builder running");

    fs.writeFileSync(go, "");
    const later = await session.call("wait", { names: ["builder"], timeoutS: 30 });
    expect(later.data).toMatchObject({
      records: [{ name: "builder", status: "ok", reply: "built" }],
      running: [],
    });
    // The usage tool totals what it spent: codex's turn reported 10 input and 2 output tokens.
    const usage = await session.call("usage", { by: "backend" });
    expect(usage.isError).toBe(false);
    expect(usage.data).toMatchObject({
      by: "backend",
      groups: [{ key: "codex", dispatches: 1, tokens: 12, input: 10, output: 2 }],
      total: { dispatches: 1, tokens: 12 },
    });
  });

  it("dispatches a failover ladder: wait's snapshot names the running attempt, then returns the last attempt's record", async () => {
    const bins = tempDir();
    const go = path.join(bins, "go");
    const codex = fakeCli(bins, "codex", [{ lines: recordedLines("codex", "quota"), exit: 1 }]);
    // Claude prints its init line, then holds until `go` before it answers.
    const claude = fakeCli(bins, "claude", [
      { lines: recordedLines("claude", "text"), exit: 0, holdAt: { line: 1, until: go } },
    ]);
    const savedBin = process.env.CATHERD_CLAUDE_BIN;
    process.env.CATHERD_CLAUDE_BIN = claude;
    try {
      await dispatch({
        backend: "codex",
        bin: codex,
        name: "ladder",
        brief: "say hello",
        fallback: ["claude-code"],
      });
    } finally {
      if (savedBin === undefined) delete process.env.CATHERD_CLAUDE_BIN;
      else process.env.CATHERD_CLAUDE_BIN = savedBin;
    }
    // The hand-over starts claude as attempt 2: its supervisor sets the dispatch variable reapAll looks for.
    await waitForFile(path.join(bins, "claude.count"), 30_000);
    const result = await session.call("result", { name: "ladder" });
    expect(result).toMatchObject({ isError: true, data: { error: { code: "E_NOT_RECORDED" } } });
    const second = (await cliJson(["status"])) as { dispatches: { dispatchId: string }[] };
    dispatched.push(...second.dispatches.map((d) => d.dispatchId));

    const early = await session.call("wait", { names: ["ladder"], timeoutS: 1 });
    expect(early.data).toMatchObject({
      records: [],
      running: [{ name: "ladder", state: "running", attempt: 2, backend: "claude-code" }],
    });
    expect(early.text).toMatch(/^none recorded; still running: ladder running \(attempt 2, claude-code\)/);

    fs.writeFileSync(go, "");
    const later = await session.call("wait", { names: ["ladder"], timeoutS: 30 });
    expect(later.isError).toBe(false);
    expect(later.data).toMatchObject({
      records: [{ name: "ladder", backend: "claude-code", status: "ok", attempt: 2, next: null }],
      running: [],
    });
    const full = await session.call("result", { name: "ladder" });
    expect(full.data).toEqual(await cliJson(["result", "ladder"]));
    const attempts = (full.data as ResultData).attempts;
    expect(attempts.map((a) => [a.backend, a.status, a.kind])).toEqual([
      ["codex", "limit", "quota"],
      ["claude-code", "ok", null],
    ]);
    expect(calls(bins, "claude")).toHaveLength(1);
  });

  it("notifies a chain once, when it has ended: its last attempt and how it ended, not the first attempt's limit", async () => {
    const bins = tempDir();
    const codex = fakeCli(bins, "codex", [{ lines: recordedLines("codex", "quota"), exit: 1 }]);
    const claude = fakeCli(bins, "claude", [{ lines: recordedLines("claude", "text"), exit: 0 }]);
    const savedBin = process.env.CATHERD_CLAUDE_BIN;
    process.env.CATHERD_CLAUDE_BIN = claude;
    try {
      await dispatch({
        backend: "codex",
        bin: codex,
        name: "chain",
        brief: "say hello",
        fallback: ["claude-code"],
      });
    } finally {
      if (savedBin === undefined) delete process.env.CATHERD_CLAUDE_BIN;
      else process.env.CATHERD_CLAUDE_BIN = savedBin;
    }
    const notice = await waitFor("the chain's notification", () => session.notices[0], 30_000);
    // Attempt 1 is recorded `limit` first: a notifier that did not follow the chain would report it.
    expect(notice).toMatchObject({ event: "recorded", name: "chain", status: "ok" });
    const attempts = (await cliJson(["result", "chain"])) as ResultData;
    dispatched.push(...attempts.attempts.map((a) => a.dispatchId));
    expect(attempts.attempts.map((a) => [a.backend, a.status])).toEqual([
      ["codex", "limit"],
      ["claude-code", "ok"],
    ]);
    expect(notice).toMatchObject({ dispatchId: attempts.attempts[1]?.dispatchId });
    expect(session.notices).toHaveLength(1);
    expect(session.levels).toEqual(["info"]);
  });

  it("cancels a dispatch and reports the CLIs, as cancel and doctor do", async () => {
    await dispatch(fakeDispatch("stuck", [{ out: "waiting" }, { hang: true }]));
    const cancelled = await session.call("cancel", { name: "stuck" });
    expect(cancelled.isError).toBe(false);
    expect(cancelled.data).toMatchObject({ cancelled: { status: null } });
    const waited = await session.call("wait", { names: ["stuck"], timeoutS: 30 });
    expect(waited.data).toMatchObject({ records: [{ name: "stuck", status: "cancelled" }] });

    const bin = path.join(tempDir(), "fake-codex");
    fs.writeFileSync(bin, "#!/bin/sh\necho 'codex-cli 0.171.0'\n", { mode: 0o755 });
    process.env.CATHERD_CODEX_BIN = bin;
    try {
      const doctor = await session.call("doctor", { backends: ["codex"] });
      expect(doctor.data).toEqual(await runDoctorCli(bin));
      // doctor reports the version number the CLI named (backends.md, doctor), not its whole line.
      expect(doctor.text).toBe("codex 0.171.0");
    } finally {
      delete process.env.CATHERD_CODEX_BIN;
    }
  });

  it("answers bad input to every tool with a tool error: the E_ code, the message and the fix", async () => {
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      [
        "dispatch",
        { backend: "nope", args: ["true"] },
        "E_INPUT_INVALID",
        /codex, claude-code, opencode, gemini, exec/,
      ],
      ["dispatch", { backend: "exec" }, "E_INPUT_INVALID", /command is required/],
      ["dispatch", { backend: "exec", args: ["true"], frobnicate: 1 }, "E_INPUT_INVALID", /frobnicate/],
      ["dispatch", { backend: "exec", args: "true" }, "E_INPUT_INVALID", /args/],
      ["dispatch", { backend: "codex", bin: FAKE_AGENT }, "E_INPUT_INVALID", /brief is required/],
      ["dispatch", { backend: "codex", bin: FAKE_AGENT, briefFile: "-" }, "E_INPUT_INVALID", /stdin/],
      [
        "dispatch",
        { backend: "exec", args: ["true"], maxParallel: 0 },
        "E_INPUT_INVALID",
        /^error \S+: maxParallel/,
      ],
      [
        "dispatch",
        { backend: "exec", args: ["true"], idle: "soon" },
        "E_INPUT_INVALID",
        /idle "soon".*give idle as/s,
      ],
      ["dispatch", { backend: "exec", args: ["true"], maxTokens: 0 }, "E_INPUT_INVALID", /maxTokens "0"/],
      ["dispatch", { backend: "exec", args: ["true"], maxCost: -1 }, "E_INPUT_INVALID", /maxCost "-1"/],
      ["wait", { timeoutS: 301 }, "E_INPUT_INVALID", /timeoutS/],
      ["wait", { timeoutS: "soon" }, "E_INPUT_INVALID", /timeoutS/],
      ["wait", { names: ["nobody"] }, "E_DISPATCH_NOT_FOUND", /nobody/],
      ["wait", { run: "typo" }, "E_RUN_NOT_FOUND", /no run typo/],
      ["result", { name: "nobody" }, "E_DISPATCH_NOT_FOUND", /nobody/],
      ["result", {}, "E_INPUT_INVALID", /needs name/],
      ["status", { all: "yes" }, "E_INPUT_INVALID", /all/],
      ["status", { run: "../etc" }, "E_INPUT_INVALID", /run "..\/etc"/],
      ["show", { name: "bad name!" }, "E_INPUT_INVALID", /not a valid name/],
      ["logs", { name: "nobody", since: -1 }, "E_INPUT_INVALID", /since "-1"/],
      ["logs", { name: "nobody", follow: true }, "E_INPUT_INVALID", /follow/],
      ["cancel", {}, "E_INPUT_INVALID", /needs name/],
      ["cancel", { name: "nobody", wait: true }, "E_INPUT_INVALID", /wait/],
      ["doctor", { backends: ["nope"] }, "E_INPUT_INVALID", /unknown backend/],
      ["frobnicate", {}, "E_INPUT_INVALID", /no tool/],
    ];
    for (const [tool, args, code, message] of cases) {
      const answer = await session.call(tool, args);
      const what = `${tool} ${JSON.stringify(args)}: ${answer.text}`;
      // An agent has no shell: the tool's arguments, never the command line's flags or verbs.
      expect(answer.text, what).not.toMatch(
        / --[a-z]|catherd (dispatch|wait|result|status|show|logs|cancel) /,
      );
      expect(answer.isError, what).toBe(true);
      expect(answer.data, what).toMatchObject({ error: { code } });
      expect(answer.text, what).toMatch(new RegExp(`^error ${code}: `));
      expect(answer.text, what).toMatch(message);
      expect(answer.text, what).toMatch(/\nfix: \S/);
    }
  });

  it("takes a dispatch's caps on spending as numbers, and writes them to its spec.json", async () => {
    // A CLI that reports usage (exec reports none, and takes no caps): a codex that ends at once.
    process.env.CATHERD_CODEX_BIN = "/bin/true";
    try {
      const d = await dispatch({ backend: "codex", brief: "spend", maxTokens: 50_000, maxCost: 2.5 });
      const spec = JSON.parse(fs.readFileSync(path.join(d.dir, "spec.json"), "utf8")) as Record<
        string,
        unknown
      >;
      expect(spec).toMatchObject({ maxTokens: 50_000, maxCostUsd: 2.5 });
      await waitForFile(path.join(d.dir, "record.json"));
    } finally {
      delete process.env.CATHERD_CODEX_BIN;
    }
    const refused = await session.call("dispatch", { backend: "exec", args: ["true"], maxTokens: 50_000 });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^error E_INPUT_INVALID: maxTokens cannot hold a backend exec dispatch/);
  });

  it("survives a client that goes mid-call: the call ends, the next client is served, the dispatch is recorded", async () => {
    const go = path.join(tempDir(), "go");
    // Dispatched from the command line, so that the only watch on its folder here is the wait's.
    const cli = await runCli(
      [
        "dispatch",
        "--backend",
        "exec",
        "--name",
        "patient",
        "--json",
        "--",
        process.execPath,
        FAKE_AGENT,
        scenarioFile([{ out: "working" }, { waitFor: go }, { exit: 0 }]),
      ],
      { env },
    );
    const d = dispatchedOf(cli);
    dispatched.push(d.dispatchId);
    const call = session.call("wait", { names: ["patient"], timeoutS: 120 }).then(
      () => "answered",
      () => "failed",
    );
    await waitFor("the wait to watch the folder", () =>
      watchesInode(process.pid, d.dir) ? true : undefined,
    );
    await session.close();
    expect(await call).toBe("failed");

    session = await inProcessSession();
    fs.writeFileSync(go, "");
    const waited = await session.call("wait", { names: ["patient"], timeoutS: 30 });
    expect(waited.data).toMatchObject({ records: [{ name: "patient", status: "ok" }] });
  });

  it("serves the guide as the prompt catherd-guide, the same text catherd guide prints", async () => {
    const { prompts } = await session.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(["catherd-guide"]);
    const prompt = await session.client.getPrompt({ name: "catherd-guide" });
    expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: GUIDE } }]);
    const printed = await runCli(["guide"], { env });
    expect(printed.code).toBe(0);
    expect(printed.stdout).toBe(GUIDE);
  });
});

async function runDoctorCli(bin: string): Promise<unknown> {
  const result = await runCli(["doctor", "codex", "--json"], { env: { ...env, CATHERD_CODEX_BIN: bin } });
  return JSON.parse(result.stdout) as unknown;
}
