import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Dispatched } from "../../src/cli/dispatch-command.js";
import type { StatusData } from "../../src/cli/status-command.js";
import type { Waited } from "../../src/cli/wait-command.js";
import { OUTCOME_CONTRACT } from "../../src/dispatch/request/outcome-contract.js";
import { dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";
import { fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { readJson, reapAll, tempDir } from "../helpers/folders.js";
import { inProcessSession } from "../helpers/mcp.js";
import { isAlive, reapDispatch } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// `dispatch --outcome` with real processes (specs/record.md, "outcome"): a fake codex replays a recorded
// run whose final message ends with a STATUS line, or has none; the record carries the worker's word
// beside its verdict, and every view — status, show, wait, result, the MCP tools, --notify — shows it.

const dispatched: string[] = [];
const supervisors: number[] = [];

afterEach(async () => {
  // Every supervisor ends by itself once its record (and its notification) is out: waited for, not killed.
  await waitFor("the supervisors to exit", () =>
    supervisors.every((pid) => !isAlive(pid)) ? true : undefined,
  ).finally(() => supervisors.splice(0));
  const ids = dispatched.splice(0);
  const notifiers = ids.reduce((n, id) => n + reapDispatch(`${id}.notify`), 0);
  expect(reapAll(ids) + notifiers, "processes left running").toBe(0);
});

/** A fake codex whose one run is the recorded `text` run with its final message replaced by `reply`. */
function codexSaying(reply: string): string {
  const lines = recordedLines("codex", "text").map((line) =>
    line.replace("Hello from mockllm.", JSON.stringify(reply).slice(1, -1)),
  );
  return fakeCli(tempDir(), "codex", [{ lines, exit: 0 }]);
}

async function dispatch(env: NodeJS.ProcessEnv, name: string, extra: string[]) {
  const result = await runCli(
    ["dispatch", "--backend", "codex", "--name", name, "--brief", "Fix the test.", "--json", ...extra],
    { env },
  );
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const d = (JSON.parse(result.stdout) as Dispatched).dispatched;
  dispatched.push(d.dispatchId);
  if (d.supervisorPid !== null) supervisors.push(d.supervisorPid);
  const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
  return { ...d, record };
}

async function json<T>(env: NodeJS.ProcessEnv, args: string[]): Promise<T> {
  const result = await runCli([...args, "--json"], { env });
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${result.code}): ${result.stdout}${result.stderr}`);
  }
}

describe("dispatch --outcome", () => {
  it("reads the worker's STATUS line into the record, beside ok, and shows it in every view", async () => {
    const { env: base } = isolatedHome();
    const reply = "I looked.\n\n**STATUS:** blocked — no API key for the staging database";
    const env = { ...base, CATHERD_CODEX_BIN: codexSaying(reply) };
    const out = path.join(tempDir(), "notified");
    const notify = `printf '%s|%s|%s\\n' "$CATHERD_STATUS" "$CATHERD_OUTCOME" "$CATHERD_OUTCOME_WHY" > "${out}"`;
    const d = await dispatch(env, "asked", ["--outcome", "--notify", notify]);
    const outcome = { status: "blocked", why: "no API key for the staging database" };

    // The brief: the orchestrator's bytes, then the contract; spec.json says it was asked.
    expect(fs.readFileSync(path.join(d.dir, "brief.md"), "utf8")).toBe(
      `Fix the test.\n\n${OUTCOME_CONTRACT}\n`,
    );
    expect(readJson(path.join(d.dir, "spec.json")).outcome).toBe(true);
    // The record: catherd's verdict stays what the process did; the worker's word is beside it.
    expect(d.record.status).toBe("ok");
    expect(d.record.outcome).toEqual(outcome);

    const status = await json<StatusData>(env, ["status"]);
    expect(status.dispatches[0]?.outcome).toEqual(outcome);
    const statusText = await runCli(["status"], { env });
    expect(statusText.stdout).toContain("ok · blocked: no API key");
    for (const line of statusText.stdout.trimEnd().split("\n")) expect(line.length).toBeLessThanOrEqual(80);

    const show = await runCli(["show", "asked"], { env });
    expect(show.stdout).toContain(
      "outcome: blocked — no API key for the staging database (the worker's word)",
    );
    const waited = await json<Waited>(env, ["wait", "asked"]);
    expect(waited.records[0]?.outcome).toEqual(outcome);
    const waitText = await runCli(["wait", "asked"], { env });
    expect(waitText.stdout).toContain("  outcome: blocked — no API key");
    const result = await runCli(["result", "asked"], { env });
    expect(result.stdout).toContain("outcome: blocked — no API key for the staging database");
    expect((await json<{ outcome: unknown }>(env, ["result", "asked"])).outcome).toEqual(outcome);

    // The notification carries it too.
    await waitFor("the notify command's output", () =>
      fs.existsSync(out) && fs.readFileSync(out, "utf8").endsWith("\n") ? true : undefined,
    );
    expect(fs.readFileSync(out, "utf8")).toBe("ok|blocked|no API key for the staging database\n");
    await waitFor("the notification to end", () =>
      /exit code/.test(readText(path.join(d.dir, "notify.log"))) ? true : undefined,
    );
  });

  it("records outcome null and says so in supervisor.log when the final message has no line", async () => {
    const { env: base } = isolatedHome();
    const env = { ...base, CATHERD_CODEX_BIN: codexSaying("All done, the tests pass.") };
    const d = await dispatch(env, "silent", ["--outcome"]);
    expect(d.record.status).toBe("ok");
    expect(d.record.outcome).toBeNull();
    const log = await waitFor("the supervisor's no-outcome line", () => {
      const text = readText(path.join(d.dir, "supervisor.log"));
      return text.includes('"event":"no-outcome-line"') ? text : undefined;
    });
    expect(log).toContain("the final message carried no STATUS line");
    expect(log.split("\n").filter((l) => l.includes("no-outcome-line"))).toHaveLength(1);
    expect((await runCli(["status"], { env })).stdout).toContain("ok · no outcome");
    expect((await runCli(["result", "silent"], { env })).stdout).toContain(
      "outcome: none — the final message carried no STATUS line",
    );
  });

  it("reads nothing when not asked: no outcome in the record, though the reply has the line", async () => {
    const { env: base } = isolatedHome();
    const env = { ...base, CATHERD_CODEX_BIN: codexSaying("STATUS: complete — done") };
    const d = await dispatch(env, "unasked", []);
    expect(fs.readFileSync(path.join(d.dir, "brief.md"), "utf8")).toBe("Fix the test.");
    expect(readJson(path.join(d.dir, "spec.json")).outcome).toBeUndefined();
    expect(d.record.status).toBe("ok");
    expect("outcome" in d.record).toBe(false);
    expect(readText(path.join(d.dir, "supervisor.log"))).not.toContain("no-outcome-line");
    expect((await runCli(["status"], { env })).stdout).not.toContain(" · ");
  });

  it("is refused for exec before anything is written", async () => {
    const { home, env } = isolatedHome();
    const result = await runCli(["dispatch", "--backend", "exec", "--outcome", "--", "/bin/true"], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "error E_INPUT_INVALID: --outcome asks an agent to end with an outcome line",
    );
    expect(dispatchFolders(home)).toEqual([]);
  });
});

describe("a failover ladder and the declared outcome", () => {
  /** The recorded codex quota run, a message of the worker's (`said`) before its quota error. */
  function codexQuota(said: string | null): string[] {
    const lines = recordedLines("codex", "quota");
    if (said === null) return lines;
    const message = { type: "item.completed", item: { id: "item_1", type: "agent_message", text: said } };
    return [...lines.slice(0, 3), JSON.stringify(message), ...lines.slice(3)];
  }

  async function ladder(said: string | null) {
    const { env: base } = isolatedHome();
    const bins = tempDir();
    const codex = fakeCli(bins, "codex", [{ lines: codexQuota(said), exit: 1 }]);
    const claude = fakeCli(bins, "claude", [{ lines: recordedLines("claude", "text"), exit: 0 }]);
    const env = { ...base, CATHERD_CODEX_BIN: codex, CATHERD_CLAUDE_BIN: claude };
    const d = await dispatch(env, "chain", ["--outcome", "--fallback", "claude-code"]);
    return { env, bins, d };
  }

  it("does not climb after a worker declared itself blocked: the next CLI would be told the same", async () => {
    const { env, bins, d } = await ladder("STATUS: blocked — the repository is read-only");
    expect(d.record).toMatchObject({
      status: "limit",
      error: { kind: "quota" },
      outcome: { status: "blocked", why: "the repository is read-only" },
      next: null,
    });
    const waited = await json<Waited>(env, ["wait", "chain"]);
    expect(waited.records.map((r) => r.dispatchId)).toEqual([d.dispatchId]);
    expect(fs.existsSync(path.join(bins, "claude.calls"))).toBe(false);
  });

  it("climbs a quota without a declaration, and the next attempt is asked for its outcome too", async () => {
    const { env, d } = await ladder(null);
    expect(d.record).toMatchObject({ status: "limit", outcome: null, next: { backend: "claude-code" } });
    const waited = await runCli(["wait", "chain", "--json", "--timeout", "30s"], { env, timeoutMs: 45_000 });
    const last = (JSON.parse(waited.stdout) as Waited).records[0];
    expect(last).toMatchObject({ backend: "claude-code", status: "ok", attempt: 2, outcome: null });
    const dir = path.join(path.dirname(d.dir), last?.dispatchId ?? "?");
    supervisors.push(Number(readJson(path.join(dir, "supervisor.json")).pid));
    expect(readJson(path.join(dir, "spec.json")).outcome).toBe(true);
    // The brief is the first attempt's, contract and all, once.
    expect(fs.readFileSync(path.join(dir, "brief.md"), "utf8")).toBe(
      `Fix the test.\n\n${OUTCOME_CONTRACT}\n`,
    );
  });
});

describe("the MCP tools and outcome", () => {
  const saved = { home: process.env.CATHERD_HOME, run: process.env.CATHERD_RUN };

  it("takes outcome: true on dispatch, and result and wait carry the worker's word", async () => {
    const { env } = isolatedHome();
    process.env.CATHERD_HOME = env.CATHERD_HOME;
    process.env.CATHERD_RUN = "";
    const session = await inProcessSession();
    try {
      const tools = await session.client.listTools();
      const schema = tools.tools.find((t) => t.name === "dispatch")?.inputSchema.properties?.outcome;
      expect(schema).toMatchObject({ type: "boolean" });
      const answer = await session.call("dispatch", {
        backend: "codex",
        name: "by-mcp",
        brief: "Fix the test.",
        bin: codexSaying("Done.\n\n- STATUS: partial - the docs are left"),
        outcome: true,
      });
      expect(answer.isError, answer.text).toBe(false);
      const d = (answer.data as unknown as Dispatched).dispatched;
      dispatched.push(d.dispatchId);
      if (d.supervisorPid !== null) supervisors.push(d.supervisorPid);
      const outcome = { status: "partial", why: "the docs are left" };
      const waited = await session.call("wait", { names: ["by-mcp"], timeoutS: 30 });
      expect(waited.text).toContain("by-mcp ok · partial");
      expect((waited.data as unknown as Waited).records[0]?.outcome).toEqual(outcome);
      const result = await session.call("result", { name: "by-mcp" });
      expect(result.data.outcome).toEqual(outcome);
      expect(result.text).toContain("· partial:");
      const status = await session.call("status", {});
      expect((status.data as unknown as StatusData).dispatches[0]?.outcome).toEqual(outcome);
      const show = await session.call("show", { name: "by-mcp" });
      expect(show.text).toContain("ok (exited) · partial");
      const refused = await session.call("dispatch", { backend: "exec", outcome: true, args: ["/bin/true"] });
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain("outcome asks an agent to end with an outcome line");
    } finally {
      await session.close();
      process.env.CATHERD_HOME = saved.home;
      process.env.CATHERD_RUN = saved.run;
    }
  });
});

function readText(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
}
