import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { opencodeBackend as opencode } from "../../src/backends/opencode.js";
import { OpencodeSession, servePermission } from "../../src/backends/opencode-steer.js";
import {
  EventSieve,
  messageIdOf,
  parseBridgeOp,
  turnEnd,
  uuidOfMessageId,
} from "../../src/domain/steering/opencode-bridge-wire.js";
import type { LineFacts } from "../../src/domain/watch/facts.js";
import { ROOT } from "../helpers/folders.js";
import { planRequest } from "./recorded.js";

// opencode over `opencode serve` through catherd's bridge (specs/backends.md, "Session protocols"), against
// what the bridge printed driving opencode 1.18.33 against the mock model:
// test/fixtures/recorded/opencode-serve/<run>.in.jsonl is what was written to the bridge, <run>.out.jsonl
// what it printed (test/live/record-opencode-serve.ts made them).

const DIR = path.join(ROOT, "test/fixtures/recorded/opencode-serve");
const lines = (run: string, side: "in" | "out") =>
  fs
    .readFileSync(path.join(DIR, `${run}.${side}.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
const facts = (run: string) => lines(run, "out").map((l) => opencode.parse(l));
const pick = <K extends keyof LineFacts>(all: LineFacts[], key: K) =>
  all.flatMap((f) => (f[key] === undefined ? [] : [f[key] as NonNullable<LineFacts[K]>]));
const steer = opencode.steer;
if (steer === undefined) throw new Error("opencode must be steerable");
const BRIDGE = { node: "/usr/bin/node", program: "/opt/catherd/dist/bin/opencode-bridge.js" };
const uuid = (n: number) => `0000000${n}-0000-8000-8000-00000000000${n}`;

describe("opencode's plan, steerable", () => {
  it("runs the bridge with node on the channel, opencode and the dispatch's settings its arguments; plain stays run", () => {
    const p = opencode.plan(
      planRequest({
        bin: "/usr/bin/opencode",
        steer: { questions: true, bridge: BRIDGE },
        model: "mock/mock-model",
        effort: "high",
        thread: "ses_dd2f8c1b9ffe61TIhHsywNFVw1",
        extraArgs: ["--print-logs"],
      }),
    );
    expect(p).toMatchObject({ cmd: "/usr/bin/node", stdin: "channel", env: {} });
    expect(p.args).toEqual([
      BRIDGE.program,
      "/usr/bin/opencode",
      "--session",
      "ses_dd2f8c1b9ffe61TIhHsywNFVw1",
      "--model",
      "mock/mock-model",
      "--variant",
      "high",
      "--permission",
      JSON.stringify({ edit: "ask", bash: "ask", webfetch: "ask", external_directory: "ask" }),
      "--asks",
      "--",
      "--print-logs",
    ]);
    expect(opencode.cliBin?.(p.cmd, p.args)).toBe("/usr/bin/opencode");
    expect(opencode.plan(planRequest()).args.slice(0, 3)).toEqual(["run", "--format", "json"]);
    expect(opencode.cliBin?.("/usr/bin/opencode", ["run"])).toBe("/usr/bin/opencode");
  });

  it("asks where Claude would: with questions, commands ask (and edits, without a level); read-only stays denied, full allowed", () => {
    expect(servePermission(null, false)).toBeNull();
    expect(servePermission(null, true)).toMatchObject({ edit: "ask", bash: "ask" });
    expect(servePermission("workspace-write", true)).toEqual({
      edit: "allow",
      bash: "ask",
      external_directory: "deny",
    });
    expect(servePermission("workspace-write", false)).toEqual({
      edit: "allow",
      bash: "allow",
      external_directory: "deny",
    });
    expect(servePermission("read-only", true)).toEqual({
      edit: "deny",
      bash: "deny",
      external_directory: "deny",
    });
    expect(servePermission("full", true)).toEqual({ "*": "allow" });
  });
});

describe("the bridge's stream, as opencode 1.18.33 made it", () => {
  it("a prompt mid-tool: the session is the thread, each echo names its message, the tool open until its result, one final", () => {
    const all = facts("steer-midtool");
    expect(pick(all, "thread")).toEqual(["ses_db3b2f2deffe7zN4eFOGPGTmIW"]);
    expect(pick(all, "taken")).toEqual([uuid(1), uuid(2)]);
    expect(
      pick(all, "toolsOpened")
        .flat()
        .map((t) => t.label),
    ).toEqual(["$ sleep 4; echo slept-four"]);
    expect(pick(all, "toolsClosed")).toHaveLength(1);
    expect(pick(all, "final")).toEqual([{ isError: false, message: null }]);
    expect(pick(all, "turn").map((t) => t.running)).toEqual([true, false]);
    expect(pick(all, "answered")).toEqual([
      { id: `prompt:${uuid(1)}`, ok: true },
      { id: `prompt:${uuid(2)}`, ok: true },
      { id: `prompt:${uuid(2)}`, ok: true },
      { id: "end", ok: true },
    ]);
    const replies = pick(all, "reply");
    expect(replies.at(-2)).toEqual({ text: "LIVE-OK: heard: mid-tool words", mode: "message" });
    // The turn's end sets the reply as the session's messages hold it.
    expect(replies.at(-1)).toEqual({ text: "LIVE-OK: heard: mid-tool words", mode: "replace" });
    expect(pick(all, "usage")).toHaveLength(2);
  });

  it("an abort: the aborted turn ends interrupted, no failure; the redirect's turn ends well", () => {
    const all = facts("interrupt");
    expect(pick(all, "final")).toEqual([
      { isError: true, message: "turn interrupted" },
      { isError: false, message: null },
    ]);
    expect(pick(all, "error")).toEqual([]);
  });

  it("permission asks carry their request's id and the command; each reply closes its ask", () => {
    const all = facts("permission");
    const asks = pick(all, "asks");
    expect(asks.map((a) => [a.kind, a.asks, a.tool])).toEqual([
      ["permission", "$ echo denied > denied.txt", "bash"],
      ["permission", "$ echo allowed > allowed.txt", "bash"],
    ]);
    expect(asks.map((a) => a.request.kind)).toEqual(["permission", "permission"]);
    expect(pick(all, "withdrawn")).toEqual(asks.map((a) => a.request.id));
  });

  it("a provider's refusal ends the turn failed with its kind; a session that does not exist ends the dispatch", () => {
    const auth = pick(facts("auth401"), "error");
    expect(auth.map((e) => [e.kind, e.status])).toEqual([["auth", 401]]);
    expect(pick(facts("auth401"), "final")[0]?.isError).toBe(true);
    const model = pick(facts("model404"), "error");
    expect(model[0]?.kind).toBe("model");
    const bogus = facts("bogus-session");
    expect(pick(bogus, "final")).toEqual([
      { isError: true, message: "Session not found: ses_0000000000000000000000bogus" },
    ]);
  });

  it("the server's retries are shown, not judged, as run's silence is (a steerable dispatch ends as a plain one)", () => {
    const facts = opencode.parse(
      '{"type":"bridge.retry","attempt":2,"message":"Rate limit reached","next":1}',
    );
    expect(facts).toEqual({ progress: false, describe: "retrying 2: Rate limit reached" });
  });

  it("a follow-up opens the same session", () => {
    expect(lines("follow-up", "out").some((l) => l.includes('"resumed":true'))).toBe(true);
    expect(pick(facts("follow-up"), "taken")).toEqual([uuid(2)]);
  });
});

describe("opencode's session", () => {
  it("never writes again a message opencode took (an adopter's backlog says so); an interrupt only while a turn runs", () => {
    const session = steer.session({ args: [], env: {} });
    expect(session.interruptLines("i1")).toEqual([]);
    for (const f of facts("steer-midtool").slice(0, 4)) session.observe(f);
    expect(session.userLines("again", uuid(1))).toEqual([]);
    expect(session.userLines("new", uuid(3)).map((l) => JSON.parse(l))).toEqual([
      { op: "prompt", id: `prompt:${uuid(3)}`, uuid: uuid(3), text: "new" },
    ]);
    expect(session.interruptLines("i1")).toEqual(['{"op":"abort","id":"i1"}']);
    session.observe({ progress: true, turn: { id: "s", running: false } });
    expect(session.interruptLines("i2")).toEqual([]);
    expect(session.due()).toEqual([]);
    expect(new OpencodeSession().userLines("x", uuid(4))).toHaveLength(1);
  });

  it("answers a permission once or reject (with the why), a question with its text or a rejection; ends with `end`", () => {
    const permission = { id: "per_1", kind: "permission" };
    expect(JSON.parse(steer.responseLine(permission, {}, { allow: true, text: null, why: null }))).toEqual({
      op: "reply",
      id: "reply:per_1",
      permission: "per_1",
      reply: "once",
    });
    expect(
      JSON.parse(steer.responseLine(permission, {}, { allow: false, text: null, why: "not that" })),
    ).toMatchObject({
      reply: "reject",
      message: "not that",
    });
    const question = { id: "que_1", kind: "question" };
    const input = { questions: [{ question: "Which database?" }, { question: "Which port?" }] };
    expect(
      JSON.parse(steer.responseLine(question, input, { allow: true, text: "postgres", why: null })),
    ).toEqual({
      op: "question-reply",
      id: "question:que_1",
      question: "que_1",
      answers: [["postgres"], []],
    });
    const several = JSON.stringify({ "Which port?": "5432", "Which database?": "pg" });
    expect(
      JSON.parse(steer.responseLine(question, input, { allow: true, text: several, why: null })).answers,
    ).toEqual([["pg"], ["5432"]]);
    expect(JSON.parse(steer.responseLine(question, input, { allow: false, text: null, why: null })).op).toBe(
      "question-reject",
    );
    expect(steer.endLine?.("e1")).toBe('{"op":"end","id":"e1"}');
  });
});

describe("the bridge's wire", () => {
  it("a message id sorts by time and carries the message's uuid; other ids carry none", () => {
    const a = messageIdOf(uuid(1), 1_796_573_466_947, 0);
    const b = messageIdOf(uuid(2), 1_796_573_466_948, 0);
    expect(a).toMatch(/^msg_[0-9a-f]{44}$/);
    expect(a < b).toBe(true);
    expect(uuidOfMessageId(a)).toBe(uuid(1));
    expect(uuidOfMessageId("msg_24c1fa43a001QNl8egW6niwmf2")).toBeNull();
    expect(uuidOfMessageId(`${a.slice(0, -1)}Z`)).toBeNull();
  });

  it("reads only the ops it knows, whole", () => {
    expect(parseBridgeOp('{"op":"prompt","id":"p","uuid":"u","text":"t"}')).toMatchObject({ op: "prompt" });
    expect(parseBridgeOp('{"op":"reply","id":"r","permission":"per_1","reply":"always"}')).toBeNull();
    expect(parseBridgeOp('{"op":"prompt","id":"p","text":"t"}')).toBeNull();
    expect(parseBridgeOp('{"op":"rm -rf","id":"x"}')).toBeNull();
    expect(parseBridgeOp("not json")).toBeNull();
    expect(parseBridgeOp('{"op":"end","id":"e"}')).toEqual({ op: "end", id: "e" });
  });

  it.each([
    ["a finished reply", [{ info: { role: "assistant", time: { completed: 1 } } }], false, true, null],
    ["a reply under way", [{ info: { role: "assistant", time: {} } }], false, false, null],
    ["a prompt not answered yet", [{ info: { role: "user", time: {} } }], false, false, null],
    [
      "a failed reply",
      [{ info: { role: "assistant", time: {}, error: { name: "APIError" } } }],
      false,
      true,
      { name: "APIError" },
    ],
    ["an abort since the last prompt", [{ info: { role: "user" } }], true, true, null],
    ["nothing", [], false, false, null],
  ])("the turn's end from the newest message: %s", (_, messages, aborted, ended, error) => {
    expect(turnEnd(messages, aborted)).toEqual({ ended, error, reply: null });
  });

  it("the reply is the last step's text, opencode's synthetic texts left out", () => {
    const parts = [
      { type: "step-start" },
      { type: "text", text: "first" },
      { type: "text", text: "compacted", synthetic: true },
      { type: "text", text: "second" },
    ];
    const reply = turnEnd([{ info: { role: "assistant", time: { completed: 1 } }, parts }], false).reply;
    expect(reply).toBe("first\n\nsecond");
    expect(
      opencode.parse('{"type":"bridge.idle","sessionID":"s","error":null,"reply":"done"}').reply,
    ).toEqual({
      text: "done",
      mode: "replace",
    });
  });

  it("passes on the session's events, each part once per state", () => {
    const sieve = new EventSieve(() => "ses_a");
    const tool = (status: string, session = "ses_a") => ({
      type: "message.part.updated",
      properties: { sessionID: session, part: { id: "prt_1", type: "tool", state: { status } } },
    });
    expect(sieve.passes(tool("running"))).toBe(true);
    expect(sieve.passes(tool("running"))).toBe(false);
    expect(sieve.passes(tool("completed"))).toBe(true);
    expect(sieve.passes(tool("running", "ses_b"))).toBe(false);
    const text = (end: number | null) => ({
      type: "message.part.updated",
      properties: { sessionID: "ses_a", part: { id: "prt_2", type: "text", time: { end } } },
    });
    expect(sieve.passes(text(null))).toBe(false);
    expect(sieve.passes(text(5))).toBe(true);
    expect(sieve.passes({ type: "plugin.added", properties: { sessionID: "ses_a" } })).toBe(false);
    const assistant = {
      type: "message.updated",
      properties: { sessionID: "ses_a", info: { role: "assistant" } },
    };
    expect(sieve.passes(assistant)).toBe(false);
  });
});
