import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { claudeCodeBackend } from "../../src/backends/claude-code.js";
import type { SteerSettings } from "../../src/domain/schemas.js";
import type { LineFacts } from "../../src/domain/watch/facts.js";
import { readEntry } from "../../src/folder/inbox-files.js";
import { writeMessage } from "../../src/folder/inbox-send.js";
import { readQuestion, writeResponse } from "../../src/folder/question-files.js";
import { Steering } from "../../supervisor/steering.js";
import { tempDir } from "../helpers/folders.js";

// The supervisor's side of a conversation (supervisor/steering.ts), against a folder and a channel that
// is a plain file (what was written to the CLI, line by line), the CLI's lines given as their facts. The
// clock is the test's: `now` (monotonic) and the wall clock stand where the test puts them.

const protocol = claudeCodeBackend.steer;
if (protocol === undefined) throw new Error("claude-code must be steerable");

interface Harness {
  dir: string;
  steering: Steering;
  /** Every line written to the CLI, parsed. */
  written(): Record<string, unknown>[];
  log: { event: string; fields: Record<string, unknown> }[];
  wall: { now: number };
  /** The facts of a line of Claude's stream, as its parser reads it. */
  says(event: Record<string, unknown>): LineFacts;
}

function harness(settings: Partial<SteerSettings> = {}, brief: string | null = "fix the test"): Harness {
  const dir = tempDir();
  const channel = path.join(dir, "agent.in");
  fs.writeFileSync(channel, "");
  const log: Harness["log"] = [];
  const wall = { now: Date.parse("2026-12-02T06:00:00Z") };
  const steering = new Steering({
    dir,
    dispatchId: "20261202T060000Z-abcdef",
    protocol: protocol as NonNullable<typeof protocol>,
    settings: { keepOpenMs: null, onQuestion: null, ...settings },
    brief,
    channel,
    start: { args: [], env: {} },
    log: (event, fields = {}) => log.push({ event, fields }),
    wallNow: () => new Date(wall.now),
  });
  const written = () =>
    fs
      .readFileSync(channel, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return {
    dir,
    steering,
    written,
    log,
    wall,
    says: (event) => claudeCodeBackend.parse(JSON.stringify(event)),
  };
}

/** Claude's echo of a user line it took. */
const echo = (uuid: unknown) => ({
  type: "user",
  message: { role: "user", content: "…" },
  uuid,
  isReplay: true,
});
const assistantText = { type: "assistant", message: { id: "m1", content: [{ type: "text", text: "done" }] } };
const result = (isError = false) => ({
  type: "result",
  subtype: isError ? "error_during_execution" : "success",
  is_error: isError,
  result: isError ? undefined : "done",
  session_id: "0f6c3a52-6d1e-4c59-9a38-7a1f2a8e5b10",
});
async function send(h: Harness, text: string, interrupt = false) {
  const message = await writeMessage(h.dir, { text, interrupt, from: "test" }, () => new Date(h.wall.now));
  if (message === null) throw new Error("the dispatch has ended: nothing was written");
  return message;
}

describe("a steerable dispatch's conversation, as the supervisor runs it", () => {
  it("gives the brief first, then each message; holds the dispatch open until each is acted on", async () => {
    const h = harness();
    h.steering.look(0);
    expect(h.written()).toEqual([
      expect.objectContaining({ type: "user", uuid: h.steering.uuidOf("brief") }),
    ]);
    // A message before the CLI took the brief waits for it.
    const m = await send(h, "also the docs");
    h.steering.look(10);
    expect(h.written()).toHaveLength(1);
    h.steering.observe(h.says(echo(h.steering.uuidOf("brief"))), 20);
    h.steering.look(30);
    expect(h.written().at(-1)).toMatchObject({ type: "user", uuid: h.steering.uuidOf(m.id) });
    expect(h.steering.signals(30).ended).toBe(false);
    h.steering.observe(h.says(echo(h.steering.uuidOf(m.id))), 40);
    expect(readEntry(h.dir, m.id).state).toBe("delivered");
    h.steering.observe(h.says(assistantText), 50);
    expect(readEntry(h.dir, m.id).state).toBe("acted");
    h.steering.observe(h.says(result()), 60);
    // The conversation is over: the CLI is asked to end its session, once.
    const signals = h.steering.signals(70);
    expect(signals).toMatchObject({ ended: true, endRequestedAt: 70 });
    expect(h.written().at(-1)).toMatchObject({
      type: "control_request",
      request: { subtype: "end_session" },
    });
    h.steering.signals(80);
    expect(h.written().filter((l) => l.type === "control_request")).toHaveLength(1);
  });

  it("leaves a later message queued when the CLI echoes again one it had (given again by an adopter)", async () => {
    const h = harness();
    h.steering.look(0);
    h.steering.observe(h.says(echo(h.steering.uuidOf("brief"))), 10);
    const first = await send(h, "first");
    h.steering.look(20);
    h.steering.observe(h.says(echo(h.steering.uuidOf(first.id))), 30);
    const second = await send(h, "second");
    h.steering.look(40);
    expect(h.written().at(-1)).toMatchObject({ uuid: h.steering.uuidOf(second.id) });
    // The CLI skips a uuid it has seen and echoes it again at once: that says nothing of the next one.
    h.steering.observe(h.says(echo(h.steering.uuidOf(first.id))), 50);
    expect(readEntry(h.dir, second.id).state).toBe("queued");
    h.steering.observe(h.says(echo(h.steering.uuidOf(second.id))), 60);
    expect(readEntry(h.dir, second.id).state).toBe("delivered");
  });

  it("interrupts a running turn before the message, and takes the interrupted turn's final out", async () => {
    const h = harness();
    h.steering.look(0);
    h.steering.observe(h.says(echo(h.steering.uuidOf("brief"))), 10);
    const m = await send(h, "do the other thing", true);
    h.steering.look(20);
    const [, interrupt, message] = h.written();
    expect(interrupt).toMatchObject({ type: "control_request", request: { subtype: "interrupt" } });
    expect(message).toMatchObject({ type: "user", uuid: h.steering.uuidOf(m.id) });
    const interrupted = h.steering.observe(h.says(result(true)), 30);
    expect(interrupted.final).toBeUndefined();
    expect(interrupted.error).toBeUndefined();
    expect(h.log.map((l) => l.event)).toContain("interrupted");
    // The redirect's own final is the dispatch's.
    h.steering.observe(h.says(echo(h.steering.uuidOf(m.id))), 40);
    expect(h.steering.observe(h.says(result()), 50).final).toEqual({ isError: false, message: null });
  });

  it("keeps an ended turn open for --keep-open, counting the wait, and ends it once the window is over", () => {
    const h = harness({ keepOpenMs: 5_000 });
    h.steering.look(0);
    h.steering.observe(h.says(echo(h.steering.uuidOf("brief"))), 10);
    h.steering.observe(h.says(result()), 100);
    expect(h.steering.signals(200)).toMatchObject({ ended: true, waitingSince: 200, endRequestedAt: null });
    expect(h.steering.signals(5_199).endRequestedAt).toBeNull();
    expect(h.steering.signals(5_200).endRequestedAt).toBe(5_200);
    expect(h.steering.keptOpenMs(6_000)).toBe(5_800);
  });

  it("fails what it never gave the CLI, and a file that is not a message", async () => {
    const h = harness();
    h.steering.look(0);
    const never = await send(h, "too late");
    fs.writeFileSync(path.join(h.dir, "inbox", "20261202T060000001Z-aaaaaa.json"), '{"schema":1,"id":');
    h.steering.observe(h.says(echo(h.steering.uuidOf("brief"))), 10);
    h.steering.look(20);
    expect(readEntry(h.dir, "20261202T060000001Z-aaaaaa")).toMatchObject({ state: "failed" });
    h.steering.end(true);
    // Given, not taken: still queued, so failed at the end.
    expect(readEntry(h.dir, never.id).receipt?.history.at(-1)).toMatchObject({
      state: "failed",
      why: "the dispatch was cancelled",
    });
  });

  it("writes each ask as a question once; a policy answers it when its wait is over; the answer goes once", () => {
    const h = harness({ onQuestion: { policy: "wait", waitMs: 60_000 } });
    h.steering.look(0);
    h.steering.observe(h.says(echo(h.steering.uuidOf("brief"))), 10);
    const ask = {
      type: "control_request",
      request_id: "r1",
      request: {
        subtype: "can_use_tool",
        tool_name: "Bash",
        input: { command: "npm test" },
        tool_use_id: "t1",
      },
    };
    h.steering.observe(h.says(ask), 20);
    h.steering.observe(h.says(ask), 25); // an adopter reading it again
    h.steering.look(30);
    expect(readQuestion(h.dir, "q1")?.question).toMatchObject({ kind: "permission", asks: "$ npm test" });
    expect(readQuestion(h.dir, "q2")).toBeNull();
    expect(h.steering.signals(30)).toMatchObject({ asking: true, ended: false, questionDueAt: 60_030 });
    h.wall.now += 60_000;
    h.steering.look(60_030);
    const answer = h.written().at(-1);
    expect(answer).toMatchObject({
      type: "control_response",
      response: {
        request_id: "r1",
        response: { behavior: "deny", message: expect.stringMatching(/nobody answered/) },
      },
    });
    h.steering.look(60_040);
    expect(h.written().filter((l) => l.type === "control_response")).toHaveLength(1);
    expect(h.steering.signals(60_050).asking).toBe(false);
  });

  it("gives a person's answer, the first one, as it comes", () => {
    const h = harness({ onQuestion: { policy: "wait", waitMs: 60_000 } });
    h.steering.look(0);
    h.steering.observe(h.says(echo(h.steering.uuidOf("brief"))), 10);
    h.steering.observe(
      h.says({
        type: "control_request",
        request_id: "r2",
        request: { subtype: "can_use_tool", tool_name: "Write", input: { file_path: "a.ts" } },
      }),
      20,
    );
    h.steering.look(30);
    expect(
      writeResponse(h.dir, { id: "q1", allow: true, text: null, why: null, by: "person", at: "t" }),
    ).toBe(true);
    expect(
      writeResponse(h.dir, { id: "q1", allow: false, text: null, why: null, by: "policy", at: "t" }),
    ).toBe(false);
    h.steering.look(40);
    expect(h.written().at(-1)).toMatchObject({
      response: { request_id: "r2", response: { behavior: "allow", updatedInput: { file_path: "a.ts" } } },
    });
  });
});
