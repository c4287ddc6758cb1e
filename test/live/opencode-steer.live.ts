import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
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

// Talking to a running real opencode over `opencode serve` through catherd's bridge (specs/steering.md,
// "Which backends"): a dispatch started --steerable, driven by the built `catherd send` and `catherd
// answer`, against the mock's `steer` scenario (for Chat Completions: the model runs the command the
// user's newest words name after `RUN `, says what it heard otherwise, and what the command printed after
// a tool's result).

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
  sendLive(d, server, { name: "opencode-steer", text, more });
const lines = streamObjects;

/** Each line's type, a tool part's with its status: "message.part.updated tool running". */
function trail(d: LiveDispatch): string[] {
  return lines(d).map((l) => {
    const part = (l.properties as { part?: { type?: string; state?: { status?: string } } } | undefined)
      ?.part;
    const role = (l.properties as { info?: { role?: string } } | undefined)?.info?.role;
    if (part?.type === "tool") return `tool ${part.state?.status ?? ""}`;
    return role === undefined ? String(l.type) : `${String(l.type)} ${role}`;
  });
}

async function toolRunning(d: LiveDispatch): Promise<void> {
  await waitFor(
    "the tool running",
    () => (trail(d).includes("tool running") ? true : undefined),
    120_000,
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

const steerRequests = () => server.requests.filter((r) => r.api === "chat" && r.scenario === "steer");
const requestsText = () =>
  steerRequests()
    .map((r) => `${r.answer} ${r.note ?? ""} said=${JSON.stringify(r.said ?? [])}`)
    .join("\n");
const turnEnds = (d: LiveDispatch) => lines(d).filter((l) => l.type === "bridge.idle").length;

describe("steering a running real opencode over its server", () => {
  it("a message sent while a command runs reaches the model in the same session, after the command's result", async () => {
    checkPrerequisites("opencode");
    const d = await run.dispatch("opencode", "steer", {
      idle: "90s",
      flags: ["--steerable", "--brief", "Please RUN sleep 6; echo slept-six"],
    });
    await toolRunning(d);
    const id = await send(d, MID_TOOL);
    const { record } = await waitForRecord(d, 150_000);
    const why = `${diagnostics(d, server)}\n--- steer requests\n${requestsText()}`;
    expect(record.status, why).toBe("ok");
    expect(record.reply, why).toBe(`${HEARD_MARKER}${MID_TOOL}`);
    // One turn: the command ran to its end, then the model read the message.
    const t = trail(d);
    expect(t.filter((e) => e === "bridge.idle").length, why).toBe(1);
    const carrying = steerRequests().filter((r) => (r.said ?? []).includes(MID_TOOL));
    expect(carrying.length, why).toBeGreaterThanOrEqual(1);
    expect(carrying[0]?.answer, why).toBe("heard");
    expect(
      receipt(d, id)?.history.map((h) => h.state),
      why,
    ).toEqual(["queued", "delivered", "acted"]);
    expect(leftovers(d), why).toEqual([]);
  });

  it("send --interrupt during a long command aborts that turn, and the redirect runs as the next turn", async () => {
    checkPrerequisites("opencode");
    const d = await run.dispatch("opencode", "steer", {
      idle: "90s",
      flags: ["--steerable", "--brief", "Please RUN sleep 60; echo never-printed"],
    });
    await toolRunning(d);
    const startedAt = Date.now();
    const id = await send(d, REDIRECT, ["--interrupt"]);
    const { record } = await waitForRecord(d, 150_000);
    const why = `${diagnostics(d, server)}\n--- steer requests\n${requestsText()}`;
    expect(Date.now() - startedAt, why).toBeLessThan(45_000);
    expect(record.status, why).toBe("ok");
    expect(record.reply, why).toBe(`${HEARD_MARKER}${REDIRECT}`);
    const ends = lines(d).filter((l) => l.type === "bridge.idle");
    expect(
      ends.map((l) => (l.error as { name?: string } | null)?.name ?? null),
      why,
    ).toEqual(["MessageAbortedError", null]);
    expect(fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8"), why).not.toContain("never-printed\\n");
    expect(receipt(d, id)?.state, why).toBe("acted");
    expect(leftovers(d), why).toEqual([]);
  });

  it("a command's permission is answered by catherd answer: rejected with a why, then (next turn) allowed", async () => {
    checkPrerequisites("opencode");
    const denied = "node -e \"require('fs').writeFileSync('denied.txt','x')\" && echo wrote-denied";
    const allowed = "node -e \"require('fs').writeFileSync('allowed.txt','x')\" && echo wrote-allowed";
    const d = await run.dispatch("opencode", "steer", {
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
    expect(q1.tool, why()).toBe("bash");
    expect(String(q1.asks), why()).toContain("denied.txt");
    const deny = await catherd(d, [
      "answer",
      "opencode-steer",
      "q1",
      "--deny",
      "--why",
      "NOT-THAT-FILE",
      "--json",
    ]);
    expect(deny.code, `${deny.stdout}${deny.stderr}`).toBe(0);
    await waitFor("the first turn's end", () => (turnEnds(d) >= 1 ? true : undefined), 90_000).catch(
      (error) => {
        throw new Error(`${String(error)}\n${why()}`);
      },
    );
    expect(fs.existsSync(path.join(work, "denied.txt")), why()).toBe(false);
    // The why reached the model as the command's failure: the mock says what the command "printed".
    const events = fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8");
    expect(events, why()).toContain("the command printed: The user rejected permission");
    expect(events, why()).toContain("feedback: NOT-THAT-FILE");

    const id = await send(d, `Now RUN ${allowed}`);
    const q2 = await questionAsked(d, "q2", why);
    expect(String(q2.asks), why()).toContain("allowed.txt");
    const allow = await catherd(d, ["answer", "opencode-steer", "q2", "--allow", "--json"]);
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

describe("steering a real opencode inside catherd's sandbox (files+net)", () => {
  it("the bridge and its server run inside it: a message sent mid-command reaches the model", async () => {
    checkPrerequisites("opencode");
    const boxed = new LiveRun(server, { sandboxed: true });
    try {
      const d = await boxed.dispatch("opencode", "steer", {
        idle: "90s",
        flags: ["--steerable", "--brief", "Please RUN sleep 6; echo slept-six"],
      });
      await toolRunning(d);
      const id = await send(d, MID_TOOL);
      const { record } = await waitForRecord(d, 150_000);
      const why = `${diagnostics(d, server)}\n--- steer requests\n${requestsText()}`;
      expect(fs.existsSync(path.join(d.dir, "sandbox.log")), why).toBe(true);
      expect(record.status, why).toBe("ok");
      expect(record.reply, why).toBe(`${HEARD_MARKER}${MID_TOOL}`);
      expect(receipt(d, id)?.state, why).toBe("acted");
      expect(leftovers(d), why).toEqual([]);
    } finally {
      await boxed.reap(false);
    }
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
