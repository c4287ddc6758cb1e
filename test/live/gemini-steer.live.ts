import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dispatchedOf } from "../helpers/cli.js";
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

// Talking to a running real gemini over ACP (`gemini --acp`, specs/steering.md, "Which backends"): a
// dispatch started --steerable, driven by the built `catherd send`, against the mock's `steer` scenario
// (for generateContent: the model runs the command the user's newest words name after `RUN `, says what
// the command printed after its result, and what it heard otherwise). gemini takes a message only between
// turns: one sent mid-command reaches the model after that turn, as the next prompt of the same session.

const MID_TOOL = "MIDTOOL-NOTE: also mention the weather";
const REDIRECT = "REDIRECT-NOW: forget the sleep and say you are redirected";
const REMEMBER = "REMEMBER-THIS: the word is papaya";
const ASK_BACK = "FOLLOW-UP-ASK: which word did I give you";

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
  sendLive(d, server, { name: "gemini-steer", text, more });
const messages = streamObjects;

/** Each session/update's kind and each prompt's end ("end prompt:… end_turn"), in order. */
function trail(d: LiveDispatch): string[] {
  return messages(d).flatMap((m) => {
    const update = (m.params as { update?: { sessionUpdate?: string } } | undefined)?.update;
    if (m.method === "session/update" && update !== undefined) return [String(update.sessionUpdate)];
    const stop = (m.result as { stopReason?: string } | undefined)?.stopReason;
    return typeof m.id === "string" && m.id.startsWith("prompt:") ? [`end ${stop ?? "error"}`] : [];
  });
}

async function commandStarted(d: LiveDispatch): Promise<void> {
  await waitFor(
    "the command's tool_call",
    () => (trail(d).includes("tool_call") ? true : undefined),
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

const steerRequests = () => server.requests.filter((r) => r.api === "gemini" && r.scenario === "steer");
const requestsText = () =>
  steerRequests()
    .map((r) => `${r.answer} ${r.note ?? ""} said=${JSON.stringify(r.said ?? [])}`)
    .join("\n");

describe("steering a running real gemini over ACP", () => {
  it("a message sent while a command runs reaches the model in the same session, after that turn", async () => {
    checkPrerequisites("gemini");
    const d = await run.dispatch("gemini", "steer", {
      idle: "90s",
      flags: ["--steerable", "--brief", "Please RUN sleep 6; echo slept-six"],
    });
    await commandStarted(d);
    const id = await send(d, MID_TOOL);
    expect(receipt(d, id)?.state ?? "queued").toBe("queued");
    const { record } = await waitForRecord(d, 150_000);
    const why = `${diagnostics(d, server)}\n--- steer requests\n${requestsText()}`;
    expect(record.status, why).toBe("ok");
    expect(record.reply, why).toBe(`${HEARD_MARKER}${MID_TOOL}`);
    // The command's turn ran to its end (its output reached the model), then the message was the next prompt.
    const t = trail(d);
    expect(
      t.filter((e) => e.startsWith("end ")),
      why,
    ).toEqual(["end end_turn", "end end_turn"]);
    expect(t.indexOf("tool_call_update"), why).toBeLessThan(t.indexOf("end end_turn"));
    const printed = steerRequests().filter((r) => r.answer === "final");
    expect(printed.length, why).toBe(1);
    // Same session: the message's request carries the brief before it; the model read it once.
    const carrying = steerRequests().filter((r) => (r.said ?? []).includes(MID_TOOL));
    expect(carrying.length, why).toBe(1);
    expect(carrying[0]?.said?.[0], why).toContain("Please RUN sleep 6");
    expect(
      receipt(d, id)?.history.map((h) => h.state),
      why,
    ).toEqual(["queued", "delivered", "acted"]);
    expect(leftovers(d), why).toEqual([]);
  });

  it("send --interrupt during a long command cancels that turn, and the redirect runs as the next prompt", async () => {
    checkPrerequisites("gemini");
    const d = await run.dispatch("gemini", "steer", {
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
    expect(
      trail(d).filter((e) => e.startsWith("end ")),
      why,
    ).toEqual(["end cancelled", "end end_turn"]);
    expect(receipt(d, id)?.state, why).toBe("acted");
    expect(leftovers(d), why).toEqual([]);
  });

  it("a permission ask is answered by catherd answer: denied, then (next turn) allowed", async () => {
    checkPrerequisites("gemini");
    const denied = "node -e \"require('fs').writeFileSync('denied.txt','x')\" && echo wrote-denied";
    const allowed = "node -e \"require('fs').writeFileSync('allowed.txt','x')\" && echo wrote-allowed";
    const d = await run.dispatch("gemini", "steer", {
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
    expect(String(q1.asks), why()).toContain("denied.txt");
    const deny = await catherd(d, ["answer", "gemini-steer", "q1", "--deny", "--json"]);
    expect(deny.code, `${deny.stdout}${deny.stderr}`).toBe(0);
    await waitFor(
      "the first turn's end",
      () => (trail(d).includes("end end_turn") ? true : undefined),
      90_000,
    ).catch((error) => {
      throw new Error(`${String(error)}\n${why()}`);
    });
    expect(fs.existsSync(path.join(work, "denied.txt")), why()).toBe(false);

    const id = await send(d, `Now RUN ${allowed}`);
    const q2 = await questionAsked(d, "q2", why);
    expect(String(q2.asks), why()).toContain("allowed.txt");
    const allow = await catherd(d, ["answer", "gemini-steer", "q2", "--allow", "--json"]);
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

  it("a follow-up of a steerable turn loads its session: the model reads the earlier turn, the follow-up steerable", async () => {
    checkPrerequisites("gemini");
    const first = await run.dispatch("gemini", "steer", {
      idle: "90s",
      flags: ["--steerable", "--brief", REMEMBER],
    });
    const { record } = await waitForRecord(first, 150_000);
    expect(record.status, diagnostics(first, server)).toBe("ok");
    const args = ["dispatch", "--follow-up", "gemini-steer", "--brief", ASK_BACK, "--json"];
    const result = await catherd(first, args);
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
    const second: LiveDispatch = {
      cli: "gemini",
      scenario: "steer",
      ...dispatchedOf(result),
      root: first.root,
    };
    run.dispatches.push(second);
    const again = await waitForRecord(second, 150_000);
    const why = `${diagnostics(second, server)}\n--- steer requests\n${requestsText()}`;
    expect(again.record.status, why).toBe("ok");
    expect(again.record.thread, why).toBe(record.thread);
    // Steerable as the turn it follows, and its reply only this turn's: the replayed history is not in it.
    expect(JSON.parse(fs.readFileSync(path.join(second.dir, "spec.json"), "utf8")).steer, why).toBeDefined();
    expect(again.record.reply, why).toBe(`${HEARD_MARKER}${ASK_BACK}`);
    // The model read the earlier turn: the follow-up's request carries the first brief before the question.
    const carrying = steerRequests().filter((r) => (r.said ?? []).includes(ASK_BACK));
    expect(carrying.length, why).toBe(1);
    expect(carrying[0]?.said, why).toContain(REMEMBER);
    expect(leftovers(first), why).toEqual([]);
    expect(leftovers(second), why).toEqual([]);
  });
});

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
