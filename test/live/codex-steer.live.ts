import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait.js";
import {
  checkPrerequisites,
  diagnostics,
  type LiveDispatch,
  LiveRun,
  leftovers,
  waitForRecord,
} from "./harness.js";
import { HEARD_MARKER, type MockModelServer, startMockModelServer } from "./mock-model-server.js";
import { catherdOn, sendLive, streamObjects } from "./steer-kit.js";

// Talking to a running real codex over `codex app-server` (specs/steering.md, "Which backends"): a
// dispatch started --steerable, driven by the built `catherd send`, against the mock's `steer` scenario
// (for the Responses API: the model runs the command the user's newest words name after `RUN `, and says
// what it heard otherwise).

const MID_TOOL = "MIDTOOL-NOTE: also mention the weather";
const REDIRECT = "REDIRECT-NOW: forget the sleep and say you are redirected";

let server: MockModelServer;
let run: LiveRun;

beforeEach(async () => {
  server = await startMockModelServer({ quiet: true });
  run = new LiveRun(server);
});

afterEach(async (context) => {
  await run.reap(context.task.result?.state === "fail");
});

const catherd = catherdOn;
const send = (d: LiveDispatch, text: string, more: string[] = []) =>
  sendLive(d, server, { name: "codex-steer", text, more });
const messages = streamObjects;

/** `method` with its item's type, for each item notification: "item/started commandExecution". */
function trail(d: LiveDispatch): string[] {
  return messages(d).flatMap((m) => {
    const item = (m.params as { item?: { type?: string } } | undefined)?.item;
    return typeof m.method === "string" && item !== undefined ? [`${m.method} ${item.type}`] : [];
  });
}

async function commandStarted(d: LiveDispatch): Promise<void> {
  await waitFor(
    "the command's item/started",
    () => (trail(d).includes("item/started commandExecution") ? true : undefined),
    90_000,
  ).catch((error) => {
    throw new Error(`${String(error)}\n${diagnostics(d, server)}`);
  });
}

function receipt(d: LiveDispatch, id: string): { state: string; history: { state: string }[] } | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(d.dir, "inbox", `${id}.state.json`), "utf8"));
  } catch {
    return null;
  }
}

const steerRequests = () => server.requests.filter((r) => r.api === "responses" && r.scenario === "steer");
const requestsText = () =>
  steerRequests()
    .map((r) => `${r.answer} ${r.note ?? ""} said=${JSON.stringify(r.said ?? [])}`)
    .join("\n");

describe("steering a running real codex over its app-server", () => {
  it("a message sent while a command runs reaches the model in the same turn, after the command's output", async () => {
    checkPrerequisites("codex");
    const d = await run.dispatch("codex", "steer", {
      idle: "90s",
      flags: ["--steerable", "--brief", "Please RUN sleep 6; echo slept-six"],
    });
    await commandStarted(d);
    const id = await send(d, MID_TOOL);
    const { record } = await waitForRecord(d, 150_000);
    const why = `${diagnostics(d, server)}\n--- steer requests\n${requestsText()}`;
    expect(record.status, why).toBe("ok");
    expect(record.reply, why).toBe(`${HEARD_MARKER}${MID_TOOL}`);
    // One turn: the command ran to its end, then the steered message joined it.
    const t = trail(d);
    const done = t.indexOf("item/completed commandExecution");
    const echoes = t.flatMap((e, i) => (e === "item/started userMessage" ? [i] : []));
    expect(echoes.length, why).toBe(2);
    expect(echoes[1], why).toBeGreaterThan(done);
    expect(messages(d).filter((m) => m.method === "turn/completed").length, why).toBe(1);
    // The model read it once.
    const carrying = steerRequests().filter((r) => (r.said ?? []).includes(MID_TOOL));
    expect(carrying.length, why).toBe(1);
    expect(
      receipt(d, id)?.history.map((h) => h.state),
      why,
    ).toEqual(["queued", "delivered", "acted"]);
    expect(leftovers(d), why).toEqual([]);
  });

  it("a supervisor SIGKILLed once it wrote a mid-command message: its adopter asks codex first, gives nothing twice", async () => {
    checkPrerequisites("codex");
    const d = await run.dispatch("codex", "steer", {
      idle: "90s",
      flags: ["--steerable", "--brief", "Please RUN sleep 8; echo slept-eight"],
    });
    await commandStarted(d);
    const id = await send(d, MID_TOOL);
    const log = path.join(d.dir, "supervisor.log");
    await waitFor("the message written to the channel", () =>
      fs.readFileSync(log, "utf8").includes(`"event":"message-written","message":"${id}"`) ? true : undefined,
    );
    killPid(d.supervisorPid);
    await waitFor("the supervisor gone", () => (isAlive(d.supervisorPid) ? undefined : true));
    const status = await catherd(d, ["status", "--json"]);
    expect(status.code, status.stderr).toBe(0);
    const { record, exit } = await waitForRecord(d, 150_000);
    const adopter = (
      JSON.parse(fs.readFileSync(path.join(d.dir, "supervisor.json"), "utf8")) as { pid: number }
    ).pid;
    await waitFor("the adopter gone", () => (isAlive(adopter) ? undefined : true), 30_000);
    const why = `${diagnostics(d, server)}\n--- steer requests\n${requestsText()}`;
    expect((exit as { adoptions?: number }).adoptions, why).toBe(1);
    expect(record.status, why).toBe("ok");
    expect(record.reply, why).toBe(`${HEARD_MARKER}${MID_TOOL}`);
    // The adopter's probe (thread/read) was answered by codex before it gave anything.
    expect(
      messages(d).some((m) => m.id === "probe:1" && m.result !== undefined),
      why,
    ).toBe(true);
    const carrying = steerRequests().filter((r) => (r.said ?? []).includes(MID_TOOL));
    expect(carrying.length, why).toBe(1);
    expect(receipt(d, id)?.state, why).toBe("acted");
    expect(leftovers(d), why).toEqual([]);
  });

  it("send --interrupt during a long command ends that turn, and the redirect runs as the next turn", async () => {
    checkPrerequisites("codex");
    const d = await run.dispatch("codex", "steer", {
      idle: "90s",
      flags: ["--steerable", "--brief", "Please RUN sleep 60; echo never-printed"],
    });
    await commandStarted(d);
    const startedAt = Date.now();
    const id = await send(d, REDIRECT, ["--interrupt"]);
    const { record } = await waitForRecord(d, 150_000);
    const why = `${diagnostics(d, server)}\n--- steer requests\n${requestsText()}`;
    expect(Date.now() - startedAt, why).toBeLessThan(45_000);
    expect(record.status, why).toBe("ok");
    expect(record.reply, why).toBe(`${HEARD_MARKER}${REDIRECT}`);
    const statuses = messages(d)
      .filter((m) => m.method === "turn/completed")
      .map((m) => (m.params as { turn: { status: string } }).turn.status);
    expect(statuses, why).toEqual(["interrupted", "completed"]);
    expect(fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8"), why).not.toContain("never-printed\\n");
    expect(receipt(d, id)?.state, why).toBe("acted");
    expect(leftovers(d), why).toEqual([]);
  });

  it("a command's approval is answered by catherd answer: declined, then (next turn) accepted", async () => {
    checkPrerequisites("codex");
    const denied = "node -e \"require('fs').writeFileSync('denied.txt','x')\" && echo wrote-denied";
    const allowed = "node -e \"require('fs').writeFileSync('allowed.txt','x')\" && echo wrote-allowed";
    const d = await run.dispatch("codex", "steer", {
      idle: "90s",
      flags: [
        "--brief",
        `Please RUN ${denied}`,
        "--access",
        "workspace-write",
        "--on-question",
        "wait 2m",
        "--keep-open",
        "15s",
      ],
    });
    const work = path.join(d.root, "work");
    const why = () => `${diagnostics(d, server)}\n--- steer requests\n${requestsText()}`;
    const q1 = await questionAsked(d, "q1", why);
    expect(q1.kind, why()).toBe("permission");
    expect(q1.tool, why()).toBe("commandExecution");
    expect(String(q1.asks), why()).toContain("denied.txt");
    const deny = await catherd(d, ["answer", "codex-steer", "q1", "--deny", "--json"]);
    expect(deny.code, `${deny.stdout}${deny.stderr}`).toBe(0);
    await waitFor("the first turn's end", () => (turnEnds(d) >= 1 ? true : undefined), 90_000).catch(
      (error) => {
        throw new Error(`${String(error)}\n${why()}`);
      },
    );
    expect(fs.existsSync(path.join(work, "denied.txt")), why()).toBe(false);

    const id = await send(d, `Now RUN ${allowed}`);
    const q2 = await questionAsked(d, "q2", why);
    expect(String(q2.asks), why()).toContain("allowed.txt");
    const allow = await catherd(d, ["answer", "codex-steer", "q2", "--allow", "--json"]);
    expect(allow.code, `${allow.stdout}${allow.stderr}`).toBe(0);

    const { record } = await waitForRecord(d, 150_000);
    expect(record.status, why()).toBe("ok");
    expect(record.reply, why()).toContain("wrote-allowed");
    expect(fs.existsSync(path.join(work, "allowed.txt")), why()).toBe(true);
    expect(fs.existsSync(path.join(work, "denied.txt")), why()).toBe(false);
    expect(receipt(d, id)?.state, why()).toBe("acted");
    expect((record as { steering?: unknown }).steering, why()).toMatchObject({
      messages: { acted: 1, queued: 0, failed: 0 },
      questions: { asked: 2, answered: 2, byPolicy: 0, unanswered: 0 },
    });
    expect(leftovers(d), why()).toEqual([]);
  });
});

const turnEnds = (d: LiveDispatch) => messages(d).filter((m) => m.method === "turn/completed").length;

/** Waits until questions/<id>.json exists; returns it. */
async function questionAsked(
  d: LiveDispatch,
  id: string,
  why: () => string,
): Promise<Record<string, unknown>> {
  const file = path.join(d.dir, "questions", `${id}.json`);
  return waitFor(
    `questions/${id}.json`,
    () => {
      try {
        return JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
      } catch {
        return undefined;
      }
    },
    90_000,
  ).catch((error) => {
    throw new Error(`${String(error)}\n${why()}`);
  });
}
