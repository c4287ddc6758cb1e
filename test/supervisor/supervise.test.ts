import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stopGraceMs } from "../../supervisor/finish.js";
import {
  type FakeScenario,
  fakeAgentFolder,
  readJson,
  reapAll,
  startSupervisor,
  supervise,
  tempDir,
} from "../helpers/folders.js";
import { isAlive } from "../helpers/processes.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

const dispatched: string[] = [];

afterEach(() => {
  const left = reapAll(dispatched.splice(0));
  expect(left, "processes left running by the dispatch").toBe(0);
});

function folder(scenario: FakeScenario, spec: Record<string, unknown> = {}) {
  const made = fakeAgentFolder(scenario, spec);
  dispatched.push(made.id);
  return made;
}

function exitOf(dir: string) {
  return readJson(path.join(dir, "exit.json"));
}

/** The lines of supervisor.log, parsed. */
function logEvents(dir: string): Record<string, unknown>[] {
  const text = fs.readFileSync(path.join(dir, "supervisor.log"), "utf8").trim();
  return text.split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
}

const codexLine = (value: unknown) => ({ out: JSON.stringify(value) });

/**
 * Supervises `dir` and cancels it once the agent has touched `ready`: the agent is stopped in the state
 * its scenario reached, however long its start-up took (a limit like idleMs would race the start-up).
 */
async function cancelOnce(dir: string, ready: string) {
  const run = startSupervisor(dir);
  await waitForFile(ready);
  fs.writeFileSync(path.join(dir, "cancel"), new Date().toISOString());
  expect(await run.done).toEqual({ code: 0, signal: null });
}

describe("catherd supervise: every way a dispatch ends", () => {
  it("records exited with the agent's own exit code", async () => {
    const { dir } = folder({ steps: [{ out: "working" }, { exit: 3 }] });
    expect((await supervise(dir)).code).toBe(0);
    expect(exitOf(dir)).toMatchObject({ reason: "exited", code: 3, signal: null, error: null });
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({ status: "failed", exitCode: 3 });
    expect(fs.readFileSync(path.join(dir, "events.jsonl"), "utf8")).toBe("working\n");
  });

  it("records idle-timeout for an agent that hangs, and stops it", async () => {
    const { dir } = folder({ steps: [{ out: "hello" }, { hang: true }] }, { idleMs: 300 });
    await supervise(dir);
    const exit = exitOf(dir);
    expect(exit).toMatchObject({ reason: "idle-timeout", signal: "SIGTERM", stop: { term: true } });
    expect(exit.stalled).toBe(true);
    expect(readJson(path.join(dir, "stall.json"))).toMatchObject({ schema: 1 });
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({ status: "timeout" });
  });

  it("keeps a busy agent running past idle and stops it at the wall", async () => {
    // sh, not the node fake agent: the tool call must be open well within idleMs of the spawn, and sh
    // prints in milliseconds where node's start-up alone can take longer than idleMs on a loaded machine.
    const opened = JSON.stringify({
      type: "item.started",
      item: { id: "i1", type: "command_execution", command: "cargo build" },
    });
    const { dir } = folder(
      { steps: [] },
      {
        backend: "codex",
        cmd: "/bin/sh",
        args: ["-c", `printf '%s\\n' '${opened}'; exec sleep 1000`],
        idleMs: 300,
        wallMs: 1200,
      },
    );
    await supervise(dir);
    const exit = exitOf(dir);
    expect(exit).toMatchObject({ reason: "wall-timeout", stalled: false });
    expect(exit.openToolCalls).toMatchObject([{ id: "i1", label: "$ cargo build" }]);
    expect(exit.durationMs as number).toBeGreaterThanOrEqual(1200);
  });

  it("stops a CLI that lingers after its final event: after-final, a success", async () => {
    const scenario = {
      steps: [
        codexLine({ type: "thread.started", thread_id: "th-1" }),
        codexLine({ type: "item.completed", item: { id: "m", type: "agent_message", text: "All done." } }),
        codexLine({
          type: "turn.completed",
          usage: { input_tokens: 10, cached_input_tokens: 4, output_tokens: 2 },
        }),
        { hang: true },
      ],
    };
    const { dir } = folder(scenario, { backend: "codex", graceAfterFinalMs: 100 });
    await supervise(dir);
    expect(exitOf(dir)).toMatchObject({ reason: "after-final", sawFinal: true, thread: "th-1" });
    expect(readJson(path.join(dir, "thread.json"))).toMatchObject({ thread: "th-1" });
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({
      status: "ok",
      reply: "All done.",
      tokens: { input: 10, cached: 4, output: 2 },
      thread: "th-1",
    });
    expect(fs.readFileSync(path.join(dir, "reply.md"), "utf8")).toBe("All done.");
  });

  it("records provider-unavailable after three reconnects in a row", async () => {
    const reconnect = (n: number) =>
      codexLine({ type: "error", message: `Reconnecting... ${n}/5 (overloaded)` });
    const { dir } = folder(
      { steps: [reconnect(1), reconnect(2), reconnect(3), { hang: true }] },
      { backend: "codex" },
    );
    await supervise(dir);
    expect(exitOf(dir)).toMatchObject({ reason: "provider-unavailable", retries: 3, kind: "provider-down" });
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({
      status: "limit",
      error: { code: "provider-unavailable", kind: "provider-down", message: "overloaded" },
    });
  });

  it("ends at once at the first retry that names a 401, and records why: auth, the provider's words, the stderr tail", async () => {
    const unauthorized =
      "unexpected status 401 Unauthorized: Incorrect API key provided: sk-proj-abcdefghijklmnop1234. You can find your API key at https://platform.openai.com/account/api-keys., url: http://127.0.0.1:9/v1/responses";
    const { dir } = folder(
      {
        steps: [
          { err: "WARNING: proceeding, even though we could not create PATH aliases" },
          { err: "" },
          { err: "Reading additional input from stdin..." },
          codexLine({ type: "error", message: `Reconnecting... 1/5 (${unauthorized})` }),
          { hang: true },
        ],
      },
      { backend: "codex", idleMs: 60_000 },
    );
    await supervise(dir);
    const exit = exitOf(dir);
    expect(exit).toMatchObject({ reason: "provider-unavailable", kind: "auth", retries: 1 });
    expect(exit.durationMs as number).toBeLessThan(30_000);
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({
      status: "failed",
      error: {
        code: "provider-unavailable",
        kind: "auth",
        message:
          "unexpected status 401 Unauthorized: Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.",
        retryAfter: null,
        tail: [
          "WARNING: proceeding, even though we could not create PATH aliases",
          "Reading additional input from stdin...",
        ],
      },
    });
  });

  it("records the rate limit a quiet agent was last seen retrying as limit, not a plain timeout", async () => {
    const { dir } = folder(
      {
        steps: [
          codexLine({ type: "thread.started", thread_id: "01a22d07-1915-73e1-aea5-ac3876195192" }),
          codexLine({
            type: "error",
            message: "Reconnecting... 1/5 (exceeded retry limit, last status: 429 Too Many Requests)",
          }),
          { hang: true },
        ],
      },
      { backend: "codex", idleMs: 1500 },
    );
    await supervise(dir);
    expect(exitOf(dir)).toMatchObject({ reason: "idle-timeout", kind: "rate-limit" });
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({
      status: "limit",
      error: {
        code: "idle-timeout",
        kind: "rate-limit",
        message: "exceeded retry limit, last status: 429 Too Many Requests",
        retryAfter: null,
        tail: [],
      },
    });
  });

  it("stops the agent and records cancelled when a cancel file appears", async () => {
    const marker = path.join(tempDir(), "running");
    const { dir } = folder({ steps: [{ touch: marker }, { hang: true }] });
    const run = startSupervisor(dir);
    await waitForFile(marker);
    fs.writeFileSync(path.join(dir, "cancel"), new Date().toISOString());
    await run.done;
    expect(exitOf(dir)).toMatchObject({ reason: "cancelled", error: null });
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({ status: "cancelled" });
  });

  it("records spawn-failed for a command that does not exist", async () => {
    const { dir } = folder({ steps: [] }, { cmd: "/nonexistent/agent-cli" });
    await supervise(dir);
    expect(exitOf(dir)).toMatchObject({
      reason: "spawn-failed",
      pid: null,
      error: { code: "E_SPAWN_FAILED" },
    });
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({ status: "failed" });
  });

  // What is wrong with spec.json names the code: the file itself (torn: E_FILE_CORRUPT, newer:
  // E_SCHEMA_NEWER), or what it says (E_SPEC_INVALID).
  it.each([
    ["torn", "E_FILE_CORRUPT", '{"cmd": "/bin/tr'],
    ["of a newer schema", "E_SCHEMA_NEWER", JSON.stringify({ schema: 9, cmd: "/bin/true" })],
    ["with a field of the wrong type", "E_SPEC_INVALID", '{"cmd": 42}'],
    ["naming an unknown backend", "E_SPEC_INVALID", JSON.stringify({ cmd: "/bin/true", backend: "cursor" })],
  ])("records spawn-failed for a spec.json %s, with %s", async (_what, code, text) => {
    const { dir } = folder({ steps: [] });
    fs.writeFileSync(path.join(dir, "spec.json"), text);
    await supervise(dir);
    expect(exitOf(dir)).toMatchObject({ reason: "spawn-failed", pid: null, error: { code } });
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({ status: "failed", error: { code } });
  });

  it("stops the agent and records cancelled when the supervisor itself gets SIGTERM", async () => {
    const marker = path.join(tempDir(), "running");
    const { dir } = folder({ steps: [{ touch: marker }, { hang: true }] });
    const run = startSupervisor(dir);
    await waitForFile(marker);
    run.child.kill("SIGTERM");
    expect((await run.done).code).toBe(0);
    expect(exitOf(dir)).toMatchObject({ reason: "cancelled", error: { code: "E_SUPERVISOR_SIGNALLED" } });
    expect(String((exitOf(dir).error as { message: string }).message)).toContain("SIGTERM");
  });
});

describe("the stop's grace", () => {
  it.each([
    ["budget", 10_000, 250],
    ["budget", 100, 100],
    ["cancelled", 10_000, 10_000],
    ["after-final", 10_000, 10_000],
    ["wall-timeout", 2000, 2000],
  ] as const)("%s with a kill grace of %i ms waits %i ms after SIGTERM", (reason, grace, waits) => {
    expect(stopGraceMs(reason, grace)).toBe(waits);
  });
});

describe("catherd supervise: agents that fight back", () => {
  it("SIGKILLs an agent that ignores SIGTERM after the kill grace", async () => {
    const ready = path.join(tempDir(), "ready");
    const { dir } = folder({ steps: [{ ignoreTerm: true }, { touch: ready }, { hang: true }] });
    await cancelOnce(dir, ready);
    expect(exitOf(dir)).toMatchObject({
      reason: "cancelled",
      signal: "SIGKILL",
      stop: { term: true, kill: true },
    });
  });

  it("sends SIGTERM again within the grace: an agent that dropped the first one ends of the second", async () => {
    const ready = path.join(tempDir(), "ready");
    const { dir } = folder(
      { steps: [{ dropTerm: 1 }, { touch: ready }, { hang: true }] },
      { killGraceMs: 8000 },
    );
    await cancelOnce(dir, ready);
    // It died of the second SIGTERM, long before the 8 s grace's SIGKILL (which may still find its
    // zombie in the group, so `stop.kill` says nothing here).
    expect(exitOf(dir)).toMatchObject({ reason: "cancelled", signal: "SIGTERM", stop: { term: true } });
    expect(exitOf(dir).durationMs as number).toBeLessThan(8000);
  });

  it("sweeps a setsid grandchild that ignores SIGTERM and outlived the group", async () => {
    const pidFile = path.join(tempDir(), "pids");
    const ready = path.join(tempDir(), "ready");
    const { dir } = folder({
      pidFile,
      steps: [{ escape: { ignoreTerm: true } }, { touch: ready }, { hang: true }],
    });
    await cancelOnce(dir, ready);
    const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
    expect(isAlive(pid)).toBe(false);
    expect(exitOf(dir)).toMatchObject({ reason: "cancelled", stop: { swept: 1 } });
  });

  it("stops a background child left behind by an agent that exited 0", async () => {
    const pidFile = path.join(tempDir(), "pids");
    const { dir } = folder({ pidFile, steps: [{ background: true }, { escape: {} }, { exit: 0 }] });
    await supervise(dir);
    const pids = fs.readFileSync(pidFile, "utf8").trim().split("\n").map(Number);
    expect(pids.filter(isAlive)).toEqual([]);
    expect(exitOf(dir)).toMatchObject({ reason: "exited", code: 0, stop: { term: true } });
    expect((exitOf(dir).stop as { swept: number }).swept).toBeGreaterThanOrEqual(1);
  });

  it("decodes a character split across two reads of events.jsonl as one character", async () => {
    // The agent writes a first thread line and, in the same write, the start of a second one that stops
    // inside the 3 bytes of "€". It writes the rest only once thread.json names the first thread: the
    // supervisor has then read the cut bytes (one write, one stat, one read), and must join them to the
    // rest at its next read. The second thread id, as the supervisor decoded it, lands in exit.json.
    const first = `${JSON.stringify({ type: "thread.started", thread_id: "th-1" })}\n`;
    const second = Buffer.from(`${JSON.stringify({ type: "thread.started", thread_id: "prix-5€" })}\n`);
    const cut = second.indexOf(Buffer.from("€")) + 1;
    const { dir } = folder({ steps: [] }, { backend: "codex" });
    const scenario: FakeScenario = {
      steps: [
        { bytes: [...Buffer.concat([Buffer.from(first), second.subarray(0, cut)])] },
        { waitFor: path.join(dir, "thread.json") },
        { bytes: [...second.subarray(cut)] },
        { exit: 0 },
      ],
    };
    fs.writeFileSync(path.join(dir, "scenario.json"), JSON.stringify(scenario));
    await supervise(dir);
    expect(exitOf(dir)).toMatchObject({ reason: "exited", thread: "prix-5€" });
    expect(readJson(path.join(dir, "thread.json"))).toMatchObject({ thread: "prix-5€" });
  });

  it("survives a 20 MB line and keeps reading after it", async () => {
    const scenario = {
      steps: [
        { bigLine: 20 * 1024 * 1024 },
        codexLine({ type: "thread.started", thread_id: "after-big" }),
        { exit: 0 },
      ],
    };
    const { dir } = folder(scenario, { backend: "codex" });
    await supervise(dir, 30_000);
    expect(exitOf(dir)).toMatchObject({ reason: "exited", thread: "after-big" });
    const log = fs.readFileSync(path.join(dir, "supervisor.log"), "utf8");
    expect(log).toContain('"event":"line-dropped"');
  });
});

describe("catherd supervise: one supervisor per folder", () => {
  it("runs the agent once when a second supervisor starts while the first holds the lock", async () => {
    const go = path.join(tempDir(), "go");
    const { dir } = folder({ steps: [{ out: "start" }, { waitFor: go }, { exit: 0 }] });
    const first = startSupervisor(dir);
    // The agent has printed and now waits for `go`: the first supervisor holds supervisor.lock until then.
    await waitFor("the agent's first line", () =>
      fs.existsSync(path.join(dir, "events.jsonl")) &&
      fs.readFileSync(path.join(dir, "events.jsonl"), "utf8") === "start\n"
        ? true
        : undefined,
    );
    const second = startSupervisor(dir);
    const secondPid = second.child.pid;
    expect(await second.done).toEqual({ code: 0, signal: null });
    const bowedOut = logEvents(dir).filter((e) => e.event === "already-supervised");
    // Refused at the lock itself (the line names no other reason), not by a later look at the folder.
    expect(bowedOut).toEqual([{ at: expect.any(String), event: "already-supervised", pid: secondPid }]);
    fs.writeFileSync(go, "go");
    expect(await first.done).toEqual({ code: 0, signal: null });
    expect(fs.readFileSync(path.join(dir, "events.jsonl"), "utf8")).toBe("start\n");
    expect(logEvents(dir).filter((e) => e.event === "spawned")).toHaveLength(1);
    expect(exitOf(dir)).toMatchObject({ reason: "exited", code: 0 });
  });

  it("does not run an agent again in a folder that already has exit.json", async () => {
    const { dir } = folder({ steps: [{ out: "once" }, { exit: 0 }] });
    await supervise(dir);
    const before = fs.readFileSync(path.join(dir, "exit.json"), "utf8");
    await supervise(dir);
    expect(fs.readFileSync(path.join(dir, "exit.json"), "utf8")).toBe(before);
    expect(fs.readFileSync(path.join(dir, "events.jsonl"), "utf8")).toBe("once\n");
  });
});
