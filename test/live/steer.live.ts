import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";
import {
  checkPrerequisites,
  diagnostics,
  dispatcherEnv,
  type LiveDispatch,
  LiveRun,
  leftovers,
  type RecordJson,
  waitForRecord,
} from "./harness.js";
import {
  FINAL_MARKER,
  HEARD_MARKER,
  type LoggedRequest,
  type MockModelServer,
  startMockModelServer,
} from "./mock-model-server.js";

// Talking to a running real Claude Code (specs/live-suite.md, "Steering a running Claude Code"): a
// dispatch started --steerable (stream-json input on a FIFO, --replay-user-messages), driven by the
// built `catherd send` and `catherd answer`, against the mock's `steer` scenario — the model runs the
// command the user's newest words name after `RUN `, and the mock notes the user and system words and
// the session of every request.

/** A message Claude adds to the running turn, as it shows it to the model (claude.md, claim 2). */
const JOINED_PREFIX = "The user sent a new message while you were working:";
const MID_TOOL = "MIDTOOL-NOTE: also mention the weather";
const REDIRECT = "REDIRECT-NOW: forget the sleep and say you are redirected";

let server: MockModelServer;
let run: LiveRun;

beforeEach(async () => {
  server = await startMockModelServer({ quiet: true });
  run = new LiveRun(server);
});

// A failed test keeps its folders. Read from the task's result: vitest runs onTestFailed handlers only
// after the afterEach hooks, too late for the reap.
afterEach(async (context) => {
  await run.reap(context.task.result?.state === "fail");
});

/** `dispatch` flags of a steerable dispatch whose brief is `brief` (given after the harness's, it wins). */
function steerFlags(brief: string, more: string[] = []): string[] {
  return ["--steerable", "--brief", brief, ...more];
}

/** Runs a built `catherd` command against the dispatch's CATHERD_HOME. */
function catherd(d: LiveDispatch, args: string[]): Promise<CliResult> {
  return runCli(args, {
    env: dispatcherEnv(path.join(d.root, "catherd-home")),
    cwd: path.join(d.root, "work"),
    timeoutMs: 60_000,
  });
}

/** `catherd send NAME text --json [more]`: the message's id. */
async function send(d: LiveDispatch, text: string, more: string[] = []): Promise<string> {
  const result = await catherd(d, ["send", "claude-steer", text, "--json", ...more]);
  expect(result.code, `${result.stdout}${result.stderr}\n${diagnostics(d, server)}`).toBe(0);
  const sent = (JSON.parse(result.stdout) as { sent: { id: string | null; followUp: unknown } }).sent;
  expect(sent.followUp, result.stdout).toBeNull();
  expect(sent.id, result.stdout).toEqual(expect.any(String));
  return sent.id as string;
}

/** The CLI's stdout (events.jsonl), one object per line that parses. */
function events(d: LiveDispatch): Record<string, unknown>[] {
  let text = "";
  try {
    text = fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8");
  } catch {
    return [];
  }
  return text.split("\n").flatMap((line) => {
    try {
      const value: unknown = JSON.parse(line);
      return typeof value === "object" && value !== null ? [value as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
}

/** The Bash commands the assistant asked for so far, in order. */
function bashCalls(d: LiveDispatch): string[] {
  return events(d).flatMap((e) => {
    if (e.type !== "assistant") return [];
    const content = (e.message as { content?: unknown } | undefined)?.content;
    if (!Array.isArray(content)) return [];
    return content
      .filter((b) => b?.type === "tool_use" && b?.name === "Bash")
      .map((b) => String((b.input as { command?: unknown } | undefined)?.command ?? ""));
  });
}

/** Waits until the n-th Bash call is in the stream (the tool is running, or about to). */
async function bashCallSeen(d: LiveDispatch, n: number, timeoutMs = 90_000): Promise<void> {
  try {
    await waitFor(
      `Bash call ${n} in events.jsonl`,
      () => (bashCalls(d).length >= n ? true : undefined),
      timeoutMs,
    );
  } catch (error) {
    throw new Error(`${String(error)}\n${diagnostics(d, server)}`);
  }
}

/** The tool results in the stream: their text and whether they failed. */
function toolResults(d: LiveDispatch): { text: string; isError: boolean }[] {
  return events(d).flatMap((e) => {
    if (e.type !== "user") return [];
    const content = (e.message as { content?: unknown } | undefined)?.content;
    if (!Array.isArray(content)) return [];
    return content
      .filter((b) => b?.type === "tool_result")
      .map((b) => ({
        text: typeof b.content === "string" ? b.content : JSON.stringify(b.content),
        isError: b.is_error === true,
      }));
  });
}

/** record.json's `steering` (specs/record.md). */
function steeringOf(record: RecordJson): unknown {
  return (record as RecordJson & { steering?: unknown }).steering;
}

function results(d: LiveDispatch): Record<string, unknown>[] {
  return events(d).filter((e) => e.type === "result");
}

/** inbox/<id>.state.json. */
function receipt(
  d: LiveDispatch,
  id: string,
): { state: string; history: { state: string; why?: string }[] } | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(d.dir, "inbox", `${id}.state.json`), "utf8"));
  } catch {
    return null;
  }
}

/** Waits until questions/<id>.json exists; returns it. */
async function questionAsked(
  d: LiveDispatch,
  id: string,
  timeoutMs = 90_000,
): Promise<Record<string, unknown>> {
  const file = path.join(d.dir, "questions", `${id}.json`);
  try {
    return await waitFor(
      `questions/${id}.json`,
      () => {
        try {
          return JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
        } catch {
          return undefined;
        }
      },
      timeoutMs,
    );
  } catch (error) {
    throw new Error(`${String(error)}\n${diagnostics(d, server)}`);
  }
}

/** The model requests (Messages API) the mock answered for the steer scenario. */
function modelRequests(): LoggedRequest[] {
  return server.requests.filter((r) => r.api === "anthropic" && r.scenario === "steer");
}

function requestsText(): string {
  return modelRequests()
    .map(
      (r) => `${r.answer} ${r.note ?? ""} session=${r.session ?? "?"} said=${JSON.stringify(r.said ?? [])}`,
    )
    .join("\n");
}

describe("steering a running real Claude Code", () => {
  it("a message sent while a tool runs reaches the model in the same turn, after the tool result", async () => {
    checkPrerequisites("claude");
    const d = await run.dispatch("claude", "steer", {
      idle: "90s",
      flags: steerFlags("Please RUN sleep 6; echo slept-six"),
    });
    await bashCallSeen(d, 1);
    const id = await send(d, MID_TOOL);
    const { record, exit } = await waitForRecord(d, 150_000);
    const why = `${diagnostics(d, server)}\n--- steer requests\n${requestsText()}`;
    expect(record.status, why).toBe("ok");
    expect(exit.code, why).toBe(0);
    expect(record.thread, why).toEqual(expect.any(String));

    // The mock saw the message, as Claude adds it to the running turn, in a request of the same
    // session that comes after the tool's result (its output, in the final answer's request).
    const requests = modelRequests();
    const carrying = requests.filter((r) => (r.said ?? []).some((t) => t.includes(MID_TOOL)));
    expect(carrying.length, why).toBeGreaterThan(0);
    const first = carrying[0] as LoggedRequest;
    expect(first.session, why).toBe(record.thread);
    expect(
      (first.said ?? []).some((t) => t.startsWith(JOINED_PREFIX) && t.includes(MID_TOOL)),
      why,
    ).toBe(true);
    expect(first.answer, why).toBe("final");
    // One turn: the brief's call, then the answer that holds the tool's output.
    expect(bashCalls(d), why).toEqual(["sleep 6; echo slept-six"]);
    expect(results(d).length, why).toBe(1);
    expect(record.reply, why).toContain(`${FINAL_MARKER}: the command printed: slept-six`);
    expect(steeringOf(record), why).toMatchObject({ messages: { acted: 1, queued: 0, failed: 0 } });

    const r = receipt(d, id);
    expect(r?.state, `${JSON.stringify(r)}\n${why}`).toBe("acted");
    expect(
      r?.history.map((h) => h.state),
      why,
    ).toEqual(["queued", "delivered", "acted"]);
    expect(leftovers(d), why).toEqual([]);
  });

  it("send --interrupt during a long tool ends that turn, and the redirect runs as the next turn", async () => {
    checkPrerequisites("claude");
    const d = await run.dispatch("claude", "steer", {
      idle: "90s",
      flags: steerFlags("Please RUN sleep 60; echo never-printed"),
    });
    await bashCallSeen(d, 1);
    const startedAt = Date.now();
    const id = await send(d, REDIRECT, ["--interrupt"]);
    const { record, exit } = await waitForRecord(d, 150_000);
    const why = `${diagnostics(d, server)}\n--- steer requests\n${requestsText()}`;
    // Claude itself ended the interrupted sleep (the supervisor's sweep found nothing).
    expect(exit.stop.swept, why).toBe(0);
    // Well before the sleep's 60 s: the interrupt stopped the tool.
    expect(Date.now() - startedAt, why).toBeLessThan(45_000);
    expect(record.status, why).toBe("ok");
    expect(record.reply, why).toBe(`${HEARD_MARKER}${REDIRECT}`);

    // The interrupted turn ended in its own result; the redirect's turn in another, a success.
    const ends = results(d).map((e) => `${String(e.subtype)}/${String(e.is_error)}`);
    expect(ends, why).toEqual(["error_during_execution/true", "success/false"]);
    // The tool was stopped: its result is Claude's rejection, not the command's output.
    const outputs = toolResults(d);
    expect(outputs.length, why).toBe(1);
    expect(outputs[0]?.isError, why).toBe(true);
    expect(outputs[0]?.text, why).not.toContain("never-printed");
    // The model was asked about the redirect in the same session, with the interrupted call behind it.
    const heard = modelRequests().filter((r) => r.answer === "heard");
    expect(heard.length, why).toBeGreaterThan(0);
    expect(heard[0]?.session, why).toBe(record.thread);
    expect(heard[0]?.said, why).toEqual(expect.arrayContaining([expect.stringContaining(REDIRECT)]));

    const r = receipt(d, id);
    expect(r?.state, `${JSON.stringify(r)}\n${why}`).toBe("acted");
    expect(leftovers(d), why).toEqual([]);
  });

  it("a permission ask is answered by catherd answer: denied, then (next turn) allowed", async () => {
    checkPrerequisites("claude");
    // Commands acceptEdits does not let through on its own (an interpreter writing a file): Bash asks.
    const denied = "node -e \"require('fs').writeFileSync('denied.txt','x')\" && echo wrote-denied";
    const allowed = "node -e \"require('fs').writeFileSync('allowed.txt','x')\" && echo wrote-allowed";
    const d = await run.dispatch("claude", "steer", {
      idle: "90s",
      flags: steerFlags(`Please RUN ${denied}`, [
        "--access",
        "workspace-write",
        "--on-question",
        "wait 2m",
        "--keep-open",
        "15s",
      ]),
    });
    const work = path.join(d.root, "work");
    const q1 = await questionAsked(d, "q1");
    const why1 = () => `${diagnostics(d, server)}\n--- steer requests\n${requestsText()}`;
    expect(q1.kind, why1()).toBe("permission");
    expect(q1.tool, why1()).toBe("Bash");
    expect(JSON.stringify(q1.input), why1()).toContain("denied.txt");
    const deny = await catherd(d, ["answer", "claude-steer", "q1", "--deny", "--why", "not now", "--json"]);
    expect(deny.code, `${deny.stdout}${deny.stderr}`).toBe(0);

    // The turn ends on the deny: the model read catherd's why as the tool's (failed) result.
    await waitFor("the first turn's result", () => (results(d).length >= 1 ? true : undefined), 90_000).catch(
      (error) => {
        throw new Error(`${String(error)}\n${why1()}`);
      },
    );
    expect(fs.existsSync(path.join(work, "denied.txt")), why1()).toBe(false);
    const toldNo = modelRequests().filter((r) => r.answer === "final");
    expect(toldNo.length, why1()).toBeGreaterThan(0);

    const id = await send(d, `Now RUN ${allowed}`);
    const q2 = await questionAsked(d, "q2");
    expect(JSON.stringify(q2.input), why1()).toContain("allowed.txt");
    const allow = await catherd(d, ["answer", "claude-steer", "q2", "--allow", "--json"]);
    expect(allow.code, `${allow.stdout}${allow.stderr}`).toBe(0);

    const { record } = await waitForRecord(d, 150_000);
    const why = why1();
    expect(record.status, why).toBe("ok");
    expect(record.reply, why).toContain(`${FINAL_MARKER}: the command printed: wrote-allowed`);
    expect(fs.existsSync(path.join(work, "allowed.txt")), why).toBe(true);
    expect(fs.existsSync(path.join(work, "denied.txt")), why).toBe(false);
    // The deny's why reached the model as the tool's result.
    const events1 = fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8");
    expect(events1, why).toContain("not now");
    expect(receipt(d, id)?.state, why).toBe("acted");
    expect(steeringOf(record), why).toMatchObject({
      messages: { acted: 1, queued: 0, failed: 0 },
      questions: { asked: 2, answered: 2, byPolicy: 0, unanswered: 0 },
    });
    for (const q of ["q1", "q2"]) {
      expect(fs.existsSync(path.join(d.dir, "questions", `${q}.delivered.json`)), `${q}\n${why}`).toBe(true);
    }
    expect(leftovers(d), why).toEqual([]);
  });
});
