import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { geminiBackend as gemini } from "../../src/backends/gemini.js";
import { ASKS_ENV, GeminiSession, RESUME_ENV } from "../../src/backends/gemini-steer.js";
import { addFacts, emptySummary } from "../../src/domain/ending/summary.js";
import type { LineFacts } from "../../src/domain/watch/facts.js";
import { ROOT } from "../helpers/folders.js";
import { planRequest } from "./recorded.js";

// gemini over ACP (specs/backends.md, "Session protocols"), against what gemini 0.61.0 printed when driven
// over stdio against the mock model: test/fixtures/recorded/gemini-acp/<run>.in.jsonl is what was written
// to it, <run>.out.jsonl what it printed, <run>.stderr its stderr (test/live/record-gemini-acp.ts).

const DIR = path.join(ROOT, "test/fixtures/recorded/gemini-acp");
const read = (file: string) => fs.readFileSync(path.join(DIR, file), "utf8");
const lines = (run: string, side: "in" | "out") =>
  read(`${run}.${side}.jsonl`)
    .split("\n")
    .filter((l) => l.trim() !== "");
const objects = (run: string, side: "in" | "out") =>
  lines(run, side).map((l) => JSON.parse(l) as Record<string, unknown>);
const facts = (run: string) => lines(run, "out").map((l) => gemini.parse(l));
const steer = gemini.steer;
if (steer === undefined) throw new Error("gemini must be steerable");

/** The record of a recorded run, stdout then stderr folded as the supervisor folds them. */
function outcomeOf(run: string) {
  const summary = emptySummary();
  for (const f of facts(run)) addFacts(summary, f);
  for (const line of read(`${run}.stderr`).split("\n"))
    addFacts(summary, gemini.parseStderr?.(line) ?? { progress: true });
  return gemini.finalize(summary, { reason: "after-final", code: null, signal: "SIGTERM" });
}

describe("gemini's plan, steerable", () => {
  it("runs gemini --acp on the channel with the approval mode and model; plain stays stream-json", () => {
    const p = gemini.plan(
      planRequest({ steer: { questions: false }, access: "workspace-write", model: "m" }),
    );
    expect(p.stdin).toBe("channel");
    expect(p.args.join(" ")).toBe("--acp --skip-trust --approval-mode auto_edit --model m");
    expect(p.env).toEqual({});
    expect(gemini.plan(planRequest()).args).toContain("stream-json");
  });

  it("takes asks as questions only with --on-question and a level a policy may not widen", () => {
    const env = (access: "read-only" | "workspace-write" | "full" | null) =>
      gemini.plan(planRequest({ steer: { questions: true }, access })).env;
    expect(env(null)).toEqual({ [ASKS_ENV]: "1" });
    expect(env("workspace-write")).toEqual({ [ASKS_ENV]: "1" });
    expect(env("read-only")).toEqual({});
    expect(env("full")).toEqual({});
  });

  it("carries a follow-up's thread to the session in its environment", () => {
    const p = gemini.plan(
      planRequest({ steer: { questions: false }, thread: "91fa730d-fd0f-4b4c-abef-f981f58d0893" }),
    );
    expect(p.env).toEqual({ [RESUME_ENV]: "91fa730d-fd0f-4b4c-abef-f981f58d0893" });
  });
});

describe("gemini's ACP stream, read as stream-json is", () => {
  it("a turn with a tool: the session, the echo as the brief's receipt, the tool open then closed, the reply, usage, the final", () => {
    const f = facts("tool-turn");
    const session = objects("tool-turn", "out").find((m) => m.id === "session");
    const id = (session?.result as { sessionId?: string } | undefined)?.sessionId;
    expect(f.filter((x) => x.thread !== undefined).map((x) => x.thread)).toEqual([id]);
    expect(f.filter((x) => x.taken !== undefined).map((x) => x.taken)).toEqual(["u-brief"]);
    const opened = f.flatMap((x) => x.toolsOpened ?? []);
    expect(opened.map((t) => t.label)).toEqual(["$ echo hello-tool"]);
    expect(f.flatMap((x) => x.toolsClosed ?? [])).toEqual([opened[0]?.id]);
    const finals = f.filter((x) => x.final !== undefined);
    expect(finals.map((x) => x.final)).toEqual([{ isError: false, message: null }]);
    expect(finals[0]?.turn).toEqual({ id: "u-brief", running: false });
    const usage = f.find((x) => x.usage !== undefined)?.usage;
    expect(usage?.scope).toBe("message");
    expect(usage?.key).toBe("prompt:u-brief");
    const total = (usage?.uses ?? []).reduce((n, u) => n + u.tokens.input, 0);
    expect(total).toBe(2400);
    const got = outcomeOf("tool-turn");
    expect(got.status).toBe("ok");
    expect(got.reply).toMatch(/^LIVE-OK: the command printed: [\s\S]*hello-tool/);
  });

  it("catherd's echo requests dumped on stderr are no failure", () => {
    const dump = read("tool-turn.stderr")
      .split("\n")
      .filter((l) => l.includes("_catherd/echo"));
    expect(dump).toContain(`  message: '"Method not found": _catherd/echo',`);
    expect(dump.map((l) => gemini.parseStderr?.(l))).toEqual(dump.map(() => ({ progress: false })));
  });

  it("a second prompt mid-tool cancels the first: its turn ends cancelled after the second's", () => {
    const f = facts("prompt-midtool");
    const ends = f.filter((x) => x.turn !== undefined).map((x) => [x.turn?.id, x.final?.isError]);
    expect(ends).toEqual([
      ["u-mid", false],
      ["u-brief", true],
    ]);
    const replies = f.filter((x) => x.reply?.mode === "append").map((x) => x.reply?.text);
    // The tool's result never reached the model: it heard only the second prompt.
    expect(replies.join("")).toBe("LIVE-OK: heard: MIDTOOL-NOTE: also mention the weather");
  });

  it("a cancelled turn ends in an error final the steering takes out, then the redirect's turn", () => {
    const f = facts("cancel-redirect").filter((x) => x.final !== undefined);
    expect(f.map((x) => x.final)).toEqual([
      { isError: true, message: "turn cancelled" },
      { isError: false, message: null },
    ]);
  });

  it("a permission ask is a question carrying gemini's request id, with its tool open while it waits", () => {
    const f = facts("permission");
    const asks = f.filter((x) => x.asks !== undefined);
    expect(asks.map((x) => [x.asks?.kind, x.asks?.asks, x.asks?.request])).toEqual([
      ["permission", "$ touch denied.txt", { id: 0, method: "session/request_permission" }],
      ["permission", "$ touch allowed.txt", { id: 1, method: "session/request_permission" }],
    ]);
    expect(asks[0]?.toolsOpened?.[0]?.label).toBe("$ touch denied.txt");
  });

  it("a cancel while a permission is asked ends the turn only once the ask is answered cancelled", () => {
    const written = objects("permission-cancel", "in").map((m) => m.method ?? "answer");
    expect(written).toEqual([
      "initialize",
      "session/new",
      "session/prompt",
      "session/cancel",
      "answer",
      "_catherd/echo",
    ]);
    // The echo written after the ask's answer says the turn had not ended before it.
    const echo = objects("permission-cancel", "out").find((m) => String(m.id).startsWith("answered-before"));
    expect(echo?.id).toBe("answered-before-the-outcome:false");
    const f = facts("permission-cancel");
    expect(f.find((x) => x.final !== undefined)?.final).toEqual({ isError: true, message: "turn cancelled" });
  });

  it("a failed prompt is the record's failure, of the kind the provider's words prove", () => {
    expect(
      [outcomeOf("auth401"), outcomeOf("model404"), outcomeOf("context400")].map((o) => [
        o.status,
        o.failure?.kind,
      ]),
    ).toEqual([
      ["failed", "auth"],
      ["failed", "model"],
      ["failed", "context"],
    ]);
  });

  it("a load by the load key: the history replayed before the prompt's echo opens no tool and is no reply", () => {
    const f = facts("load-key");
    const thread = f.find((x) => x.thread !== undefined)?.thread;
    expect(thread).toMatch(/^[0-9a-f-]{36}$/);
    const taken = f.findIndex((x) => x.taken === "u-follow");
    const replayed = f.slice(0, taken).filter((x) => x.reply !== undefined);
    expect(replayed.length).toBeGreaterThan(0);
    expect(f.flatMap((x) => x.toolsOpened ?? [])).toEqual([]);
    const got = outcomeOf("load-key");
    expect(got.status).toBe("ok");
    expect(got.reply).toBe("LIVE-OK: heard: FOLLOW-UP: what did the command print?");
  });

  it("a session/load gemini refuses (the bare id, in the session's first minute) ends the follow-up at once, a failed resume", () => {
    const f = facts("load");
    const first = f.find((x) => x.final !== undefined);
    expect(first?.answered?.id).toMatch(/^session:/);
    expect(first?.error?.message).toBe("No previous sessions found for this project.");
    expect(first?.error?.kind).toBe("resume");
  });
});

const sessionOf = (start: Partial<{ resume: string | null; asks: boolean }> = {}) =>
  new GeminiSession({ resume: null, asks: true, cwd: "/work", ...start });
const adopterOf = (adoption: number) =>
  new GeminiSession({ resume: null, asks: true, cwd: "/work", adoption });
const parsed = (...raw: Record<string, unknown>[]) =>
  raw.map((m) => gemini.parse(JSON.stringify({ jsonrpc: "2.0", ...m })));
const feed = (s: GeminiSession, all: LineFacts[]) => all.map((f) => s.observe(f));
const opened = (s: GeminiSession) => {
  s.due();
  feed(s, parsed({ id: "init", result: {} }, { id: "session", result: { sessionId: "S" } }));
  s.due();
};
/** The lines of what was written, each write split into its lines (an empty one, a probe's lead, skipped). */
const methods = (written: string[]) =>
  written
    .flatMap((w) => w.split("\n"))
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { id?: string; method?: string; params?: unknown });

describe("gemini's session: what it writes, given what the stream said", () => {
  it("opens in one write — initialize, session/new, the echo `opened` — and a message waits in it for the session", () => {
    const s = sessionOf();
    const opening = s.due();
    expect(opening).toHaveLength(1);
    expect(methods(opening).map((m) => [m.id, m.method])).toEqual([
      ["init", "initialize"],
      ["session", "session/new"],
      ["opened", "_catherd/echo"],
    ]);
    expect(s.due()).toEqual([]);
    expect(s.userLines("brief", "u1")).toEqual([]);
    feed(s, parsed({ id: "init", result: {} }));
    expect(s.due()).toEqual([]);
    feed(s, parsed({ id: "session", result: { sessionId: "S" } }));
    const given = s.due();
    expect(given).toHaveLength(1);
    expect(methods(given)).toEqual([
      {
        jsonrpc: "2.0",
        id: "prompt:u1",
        method: "session/prompt",
        params: { sessionId: "S", prompt: [{ type: "text", text: "brief" }] },
      },
      { jsonrpc: "2.0", id: "taken:u1", method: "_catherd/echo", params: {} },
    ]);
  });

  it("loads a follow-up's thread by its load key, and prompts and cancels it by that key; the thread stays bare", () => {
    const s = sessionOf({ resume: "T" });
    const [, load] = methods(s.due());
    expect(load).toMatchObject({
      id: "session:T",
      method: "session/load",
      params: { sessionId: " T", cwd: "/work" },
    });
    const [answer] = feed(s, parsed({ id: "session:T", result: { modes: {} } }));
    expect(answer?.thread).toBe("T");
    const [prompt] = methods(s.userLines("more", "u1"));
    expect(prompt).toMatchObject({ method: "session/prompt", params: { sessionId: " T" } });
    expect(methods(s.interruptLines("i1"))).toMatchObject([
      { method: "session/cancel", params: { sessionId: " T" } },
    ]);
  });

  it("never writes a second prompt while one runs: the next waits for the turn's end", () => {
    const s = sessionOf();
    opened(s);
    expect(s.userLines("one", "u1")).toHaveLength(1);
    expect(s.userLines("two", "u2")).toEqual([]);
    feed(s, parsed({ id: "taken:u1", error: { code: -32601 } }));
    expect(s.due()).toEqual([]);
    feed(s, parsed({ id: "prompt:u1", result: { stopReason: "end_turn" } }));
    expect(methods(s.due()).map((m) => m.id)).toEqual(["prompt:u2", "taken:u2"]);
  });

  it("an adopter never gives again a message gemini read, and waits for the turn that runs", () => {
    const s = sessionOf();
    opened(s);
    feed(s, parsed({ id: "taken:u1", error: { code: -32601 } }));
    expect(s.userLines("one", "u1")).toEqual([]);
    expect(s.userLines("two", "u2")).toEqual([]);
    feed(s, parsed({ id: "prompt:u1", result: { stopReason: "end_turn" } }));
    expect(methods(s.due()).map((m) => m.id)).toEqual(["prompt:u2", "taken:u2"]);
  });

  it("an adopter's first line is its probe, led by a newline; nothing else until gemini refuses it", () => {
    const s = adopterOf(2);
    feed(s, parsed({ id: "opened", error: { code: -32601 } }, { id: "session", result: { sessionId: "S" } }));
    expect(s.userLines("one", "u1")).toEqual([]);
    const [probe] = s.due();
    expect(probe?.startsWith("\n{")).toBe(true);
    expect(methods([probe ?? ""])).toEqual([
      { jsonrpc: "2.0", id: "probe:2", method: "_catherd/echo", params: {} },
    ]);
    expect(s.due()).toEqual([]);
    expect(s.userLines("two", "u2")).toEqual([]);
    // An earlier adopter's probe is not this one's.
    feed(s, parsed({ id: "probe:1", error: { code: -32601 } }));
    expect(s.due()).toEqual([]);
    feed(s, parsed({ id: "probe:2", error: { code: -32601 } }));
    expect(methods(s.due()).map((m) => m.id)).toEqual(["prompt:u1", "taken:u1"]);
  });

  it("an adopter takes what gemini refused the echo of before its probe, and gives again what it did not", () => {
    const s = adopterOf(1);
    feed(s, parsed({ id: "opened", error: { code: -32601 } }, { id: "session", result: { sessionId: "S" } }));
    s.due();
    s.userLines("held", "u1");
    s.userLines("never read", "u2");
    // The echo of u1 held until after the adopter's probe was written: it still comes before the probe's.
    feed(s, parsed({ id: "taken:u1", error: { code: -32601 } }, { id: "probe:1", error: { code: -32601 } }));
    expect(s.due()).toEqual([]);
    feed(s, parsed({ id: "prompt:u1", result: { stopReason: "end_turn" } }));
    expect(methods(s.due()).map((m) => m.id)).toEqual(["prompt:u2", "taken:u2"]);
  });

  it("an adopter opens only when no opening's echo came before its probe's; else it waits for that session", () => {
    const unopened = adopterOf(1);
    unopened.due();
    feed(unopened, parsed({ id: "probe:1", error: { code: -32601 } }));
    expect(methods(unopened.due()).map((m) => m.method)).toEqual([
      "initialize",
      "session/new",
      "_catherd/echo",
    ]);
    const opening = adopterOf(1);
    opening.due();
    feed(
      opening,
      parsed({ id: "opened", error: { code: -32601 } }, { id: "probe:1", error: { code: -32601 } }),
    );
    expect(opening.due()).toEqual([]);
    expect(opening.userLines("brief", "u1")).toEqual([]);
    feed(opening, parsed({ id: "session", result: { sessionId: "S" } }));
    expect(methods(opening.due()).map((m) => m.id)).toEqual(["prompt:u1", "taken:u1"]);
  });

  it("an adopter writes no interrupt before its probe's answer", () => {
    const s = adopterOf(1);
    feed(
      s,
      parsed({ id: "session", result: { sessionId: "S" } }, { id: "taken:u1", error: { code: -32601 } }),
    );
    s.due();
    expect(s.interruptLines("i1")).toEqual([]);
    feed(s, parsed({ id: "probe:1", error: { code: -32601 } }));
    expect(methods(s.interruptLines("i1")).map((m) => m.method)).toEqual(["session/cancel"]);
  });

  it("an interrupt cancels the running prompt and answers its open ask cancelled; the message goes after the turn", () => {
    const s = sessionOf();
    opened(s);
    s.userLines("one", "u1");
    feed(
      s,
      parsed({
        id: 4,
        method: "session/request_permission",
        params: { options: [], toolCall: { toolCallId: "t" } },
      }),
    );
    expect(methods(s.interruptLines("interrupt-x"))).toEqual([
      { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "S" } },
      { jsonrpc: "2.0", id: 4, result: { outcome: { outcome: "cancelled" } } },
    ] as never);
    expect(s.userLines("redirect", "u2")).toEqual([]);
    const [end] = feed(s, parsed({ id: "prompt:u1", result: { stopReason: "cancelled" } }));
    expect(end?.withdrawn).toBe(4);
    expect(methods(s.due()).map((m) => m.id)).toEqual(["prompt:u2", "taken:u2"]);
  });

  it("an interrupt with no prompt running writes nothing", () => {
    const s = sessionOf();
    opened(s);
    expect(s.interruptLines("interrupt-x")).toEqual([]);
  });

  it("without questions an ask is denied at once with the reject option it offers, and no question is made", () => {
    const s = sessionOf({ asks: false });
    opened(s);
    const options = [
      { optionId: "proceed_once", kind: "allow_once" },
      { optionId: "cancel", kind: "reject_once" },
    ];
    const [seen] = feed(
      s,
      parsed({
        id: 7,
        method: "session/request_permission",
        params: { options, toolCall: { toolCallId: "t", title: "rm x", kind: "execute" } },
      }),
    );
    expect(seen?.asks).toBeUndefined();
    expect(seen?.toolsOpened?.[0]?.id).toBe("t");
    expect(methods(s.due())).toEqual([
      { jsonrpc: "2.0", id: 7, result: { outcome: { outcome: "selected", optionId: "cancel" } } },
    ] as never);
  });
});

describe("gemini's answers to its permission asks", () => {
  it("allow picks the allow-once option, deny the reject-once one, as the recorded answers gemini ran and refused", () => {
    const ask = objects("permission", "out").find((m) => m.method === "session/request_permission");
    const request = { id: ask?.id, method: "session/request_permission" };
    const allow = JSON.parse(
      steer.responseLine(request, ask?.params, { allow: true, text: null, why: null }),
    );
    const deny = JSON.parse(
      steer.responseLine(request, ask?.params, { allow: false, text: null, why: "no" }),
    );
    expect(allow).toEqual({
      jsonrpc: "2.0",
      id: 0,
      result: { outcome: { outcome: "selected", optionId: "proceed_once" } },
    });
    expect(deny).toEqual({
      jsonrpc: "2.0",
      id: 0,
      result: { outcome: { outcome: "selected", optionId: "cancel" } },
    });
    // What the recording wrote for the same asks, and what gemini did with them (denied.txt absent).
    const written = objects("permission", "in").filter(
      (m) => m.method === undefined && m.result !== undefined,
    );
    expect(written.map((m) => (m.result as { outcome: { optionId: string } }).outcome.optionId)).toEqual([
      "cancel",
      "proceed_once",
    ]);
  });
});
