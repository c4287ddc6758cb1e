import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { codexBackend as codex } from "../../src/backends/codex.js";
import { CodexSession, RESUME_ENV } from "../../src/backends/codex-steer.js";
import type { LineFacts } from "../../src/domain/watch/facts.js";
import { ROOT } from "../helpers/folders.js";
import { planRequest } from "./recorded.js";

// codex's app-server (specs/backends.md, "Session protocols"), against what codex 0.171.0 printed when
// driven over stdio against the mock model: test/fixtures/recorded/codex-app-server/<run>.in.jsonl is
// what was written to it, <run>.out.jsonl what it printed (test/live/record-codex-app-server.ts made them).

const DIR = path.join(ROOT, "test/fixtures/recorded/codex-app-server");
const lines = (run: string, side: "in" | "out") =>
  fs
    .readFileSync(path.join(DIR, `${run}.${side}.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
const objects = (run: string, side: "in" | "out") =>
  lines(run, side).map((l) => JSON.parse(l) as Record<string, unknown>);
const facts = (run: string) => lines(run, "out").map((l) => codex.parse(l));
const steer = codex.steer;
if (steer === undefined) throw new Error("codex must be steerable");

describe("codex's plan, steerable", () => {
  it("runs the app-server on the channel with the access level and approval policy as config; plain stays exec", () => {
    const p = codex.plan(
      planRequest({ steer: { questions: false }, access: "workspace-write", model: "gpt-5" }),
    );
    expect(p.stdin).toBe("channel");
    expect(p.args[0]).toBe("app-server");
    expect(p.args.join(" ")).toContain('-c sandbox_mode="workspace-write" -c approval_policy="never"');
    expect(p.env).toEqual({});
    expect(p.args.join(" ")).toContain('-c model="gpt-5"');
    expect(p.args.join(" ")).not.toContain("--listen");
    expect(p.env).toEqual({});
    expect(codex.plan(planRequest()).args[0]).toBe("exec");
  });

  it("asks catherd (untrusted) only with questions and a level a policy may not widen", () => {
    // codex 0.171 refuses `untrusted` as config: it goes to thread/start, through the session.
    const policy = (access: "read-only" | "workspace-write" | "full" | null) => {
      const p = codex.plan(planRequest({ steer: { questions: true }, access }));
      return `${p.args.join(" ")} ${JSON.stringify(p.env)}`;
    };
    expect(policy("workspace-write")).toContain('{"CATHERD_CODEX_APPROVAL":"untrusted"}');
    expect(policy("workspace-write")).not.toContain("approval_policy");
    expect(policy(null)).toContain('{"CATHERD_CODEX_APPROVAL":"untrusted"}');
    expect(policy("read-only")).toContain('approval_policy="never" {}');
    expect(policy("full")).toContain('approval_policy="never" {}');
    const sandboxed = codex.plan(
      planRequest({ steer: { questions: false }, access: "read-only", sandboxed: true }),
    );
    expect(sandboxed.args.join(" ")).toContain('sandbox_mode="danger-full-access"');
  });

  it("carries a follow-up's thread to the session in its environment", () => {
    const p = codex.plan(
      planRequest({ steer: { questions: false }, thread: "01a24b86-d574-75f3-9143-eedd2f7a9b2a" }),
    );
    expect(p.env).toEqual({ [RESUME_ENV]: "01a24b86-d574-75f3-9143-eedd2f7a9b2a" });
  });
});

describe("codex's app-server stream, read as exec's is", () => {
  it("a turn with a tool: thread, turn, the brief's echo, the tool open then closed, the reply, usage, the final", () => {
    const f = facts("tool-turn");
    const thread = objects("tool-turn", "out").find((m) => m.method === "thread/started");
    const id = (thread?.params as { thread?: { id: string } } | undefined)?.thread?.id;
    expect(f.filter((x) => x.thread !== undefined).map((x) => x.thread)).toEqual([id, id]);
    expect(f.filter((x) => x.taken !== undefined).map((x) => x.taken)).toEqual(["u-brief"]);
    const opened = f.flatMap((x) => x.toolsOpened ?? []);
    expect(opened.map((t) => t.label)).toEqual(["$ echo hello-tool"]);
    expect(f.flatMap((x) => x.toolsClosed ?? [])).toEqual([opened[0]?.id]);
    const replies = f.filter((x) => x.reply?.mode === "message").map((x) => x.reply?.text);
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatch(/^LIVE-OK: the command printed: [\s\S]*hello-tool$/);
    const finals = f.filter((x) => x.final !== undefined);
    expect(finals.map((x) => x.final)).toEqual([{ isError: false, message: null }]);
    const usage = f.filter((x) => x.usage !== undefined).at(-1)?.usage;
    expect(usage).toMatchObject({ scope: "thread" });
    expect(JSON.stringify(usage)).toContain('"input":2400');
  });

  it("a steer: refused without expectedTurnId and with a wrong one, taken after the tool ends", () => {
    const f = facts("steer-midtool");
    const answers = f.filter((x) => x.answered !== undefined).map((x) => x.answered);
    expect(answers).toEqual(
      expect.arrayContaining([
        { id: "steer-missing", ok: false },
        { id: "steer-wrong", ok: false },
        { id: "steer", ok: true },
      ]),
    );
    const order = f.flatMap((x) => [
      ...(x.toolsClosed ?? []).map(() => "tool closed"),
      ...(x.taken === undefined ? [] : [`took ${x.taken}`]),
    ]);
    expect(order).toEqual(["took u-brief", "tool closed", "took u-steer", "took u-next"]);
    expect(f.filter((x) => x.final !== undefined)).toHaveLength(2);
    // The answers and the server's bookkeeping are not work.
    for (const x of f.filter((y) => y.answered !== undefined)) expect(x.progress).toBe(false);
  });

  it("an interrupted turn ends in a final the steering takes out; its turn is seen ended", () => {
    const f = facts("interrupt");
    const finals = f.filter((x) => x.final !== undefined);
    expect(finals.map((x) => x.final?.isError)).toEqual([true, false]);
    const turns = f.filter((x) => x.turn !== undefined).map((x) => x.turn?.running);
    expect(turns).toEqual([true, true, false, true, true, false]);
  });

  it("an approval is a permission question carrying the request id and method its answer needs", () => {
    const asks = facts("approval").flatMap((x) => (x.asks === undefined ? [] : [x.asks]));
    expect(asks.map((a) => a.request)).toEqual([
      { id: 0, method: "item/commandExecution/requestApproval" },
      { id: 1, method: "item/commandExecution/requestApproval" },
    ]);
    expect(asks[0]).toMatchObject({ kind: "permission", tool: "commandExecution" });
    expect(asks[0]?.asks).toMatch(/^\$ node -e .*denied\.txt/);
    // Each request cleared (here once answered) is withdrawn by its id: an open question would close.
    const withdrawn = facts("approval").flatMap((x) => (x.withdrawn === undefined ? [] : [x.withdrawn]));
    expect(withdrawn).toEqual([0, 1]);
  });

  it.each([
    ["auth401", "auth", 401, 5],
    ["context400", "context", null, 0],
    ["model404", "model", null, 0],
    ["always429", "rate-limit", 429, 0],
  ] as const)(
    "the failure of %s: kind %s from codexErrorInfo, retries apart",
    (run, kind, status, retries) => {
      const f = facts(run);
      const retried = f.filter((x) => x.retry !== undefined);
      expect(retried).toHaveLength(retries);
      for (const r of retried) expect(r).toMatchObject({ progress: false, retry: { kind, status } });
      const errors = f.flatMap((x) => (x.error === undefined ? [] : [x.error]));
      expect(errors.length).toBe(2);
      for (const e of errors) expect(e.kind).toBe(kind);
      expect(errors[0]?.message).not.toContain("url:");
      expect(f.filter((x) => x.final !== undefined).map((x) => x.final?.isError)).toEqual([true]);
    },
  );
});

/** Feeds a session the recorded stream's facts up to (and with) the first line `until` accepts. */
function feed(session: CodexSession, run: string, until: (f: LineFacts) => boolean): void {
  for (const f of facts(run)) {
    session.observe(f);
    if (until(f)) return;
  }
}

const sent = (line: string) => JSON.parse(line) as Record<string, unknown>;

describe("codex's session: what it writes, given what the stream said", () => {
  it("gives --answer-schema's schema to every turn/start (outputSchema), from the plan's environment", () => {
    const text = '{"type":"object","properties":{"verdict":{"type":"string"}}}';
    const answerSchema = { path: "/x/answer-schema.json", text };
    const p = codex.plan(planRequest({ steer: { questions: false }, answerSchema }));
    const s = steer.session({ args: p.args, env: p.env });
    s.due();
    s.observe({ progress: false, thread: "t1" });
    expect(s.userLines("the brief", "u-1").map(sent)).toMatchObject([
      { method: "turn/start", params: { outputSchema: JSON.parse(text) } },
    ]);
  });

  it("opens with initialize, initialized and thread/start in one write, once; a message waits in it for the thread", () => {
    const s = new CodexSession({ resume: null, approval: null });
    const owed = s.due();
    expect(owed.length, "one write").toBe(1);
    expect(Buffer.byteLength(owed[0] ?? "") + 1, "under PIPE_BUF").toBeLessThan(4096);
    const opening = (owed[0] ?? "").split("\n").map(sent);
    expect(opening.map((m) => m.method)).toEqual(["initialize", "initialized", "thread/start"]);
    expect(Object.keys(opening[0] ?? {}).sort()).toEqual(
      Object.keys(objects("tool-turn", "in")[0] ?? {}).sort(),
    );
    expect(s.due()).toEqual([]);
    expect(s.userLines("the brief", "u-1")).toEqual([]);
    s.observe({ progress: false, answered: { id: "thread", ok: true }, thread: "t1" });
    expect(s.due().map(sent)).toMatchObject([
      { method: "turn/start", params: { threadId: "t1", clientUserMessageId: "u-1" } },
    ]);
    expect(s.due()).toEqual([]);
  });

  it("resumes a follow-up's thread instead of starting one", () => {
    const opening = new CodexSession({
      resume: "01a24b86-d574-75f3-9143-eedd2f7a9b2a",
      approval: "untrusted",
    })
      .due()
      .flatMap((unit) => unit.split("\n"))
      .map(sent);
    expect(opening[2]).toMatchObject({
      method: "thread/resume",
      params: { threadId: "01a24b86-d574-75f3-9143-eedd2f7a9b2a", approvalPolicy: "untrusted" },
    });
  });

  it("between turns a message is turn/start; a second one waits until the turn is seen; mid-turn it steers that turn", () => {
    const s = new CodexSession({ resume: null, approval: null });
    s.due();
    feed(s, "steer-midtool", (f) => f.thread !== undefined);
    const start = sent(s.userLines("Please RUN sleep 4", "u-brief")?.[0] ?? "");
    expect(start).toMatchObject({ method: "turn/start", params: { clientUserMessageId: "u-brief" } });
    expect(s.userLines("MIDTOOL-NOTE", "u-2")).toEqual([]);
    feed(s, "steer-midtool", (f) => f.turn?.running === true);
    const steered = sent(s.due()[0] ?? "");
    const recorded = objects("steer-midtool", "in").find((m) => m.id === "steer") ?? {};
    expect(steered).toMatchObject({
      method: "turn/steer",
      params: {
        expectedTurnId: (recorded.params as { expectedTurnId: string }).expectedTurnId,
        clientUserMessageId: "u-2",
      },
    });
    expect(Object.keys(steered.params as object).sort()).toEqual(
      Object.keys(recorded.params as object).sort(),
    );
  });

  it("a steer the server refused (its turn ended meanwhile) starts the next turn, once", () => {
    const s = new CodexSession({ resume: null, approval: null });
    s.due();
    s.observe({ progress: true, thread: "t1" });
    s.observe({ progress: true, turn: { id: "turn-1", running: true } });
    expect(sent(s.userLines("late", "u-late")?.[0] ?? "").method).toBe("turn/steer");
    s.observe({
      progress: true,
      turn: { id: "turn-1", running: false },
      final: { isError: false, message: null },
    });
    s.observe({ progress: false, answered: { id: "steer:u-late", ok: false } });
    const again = s.due().map(sent);
    expect(again).toMatchObject([{ method: "turn/start", params: { clientUserMessageId: "u-late" } }]);
    expect(s.due()).toEqual([]);
  });

  it("never writes again a message the server accepted (an adopter's backlog shows its answer)", () => {
    const s = new CodexSession({ resume: null, approval: null });
    s.observe({ progress: true, thread: "t1" });
    s.observe({ progress: true, turn: { id: "turn-1", running: true } });
    s.observe({ progress: false, answered: { id: "steer:u-given", ok: true } });
    expect(s.due()).toEqual([]);
    expect(s.userLines("given before", "u-given")).toEqual([]);
    // A refusal it did not ask for is not its to repeat.
    s.observe({ progress: false, answered: { id: "steer:u-other", ok: false } });
    expect(s.due()).toEqual([]);
  });

  it("an interrupt aims at the running turn; the message after it waits for that turn's end, then starts the next", () => {
    const s = new CodexSession({ resume: null, approval: null });
    s.due();
    feed(s, "interrupt", (f) => f.toolsOpened !== undefined);
    const interrupt = sent(s.interruptLines("interrupt-m1")?.[0] ?? "");
    const recorded = objects("interrupt", "in").find((m) => m.method === "turn/interrupt") ?? {};
    expect(interrupt).toMatchObject({ method: "turn/interrupt", params: recorded.params as object });
    expect(s.userLines("REDIRECT", "u-r")).toEqual([]);
    feed(s, "interrupt", (f) => f.turn?.running === false);
    expect(s.due().map(sent)).toMatchObject([
      { method: "turn/start", params: { clientUserMessageId: "u-r" } },
    ]);
  });

  it("refused steers go again in the order they were given, not the order refused", () => {
    const s = new CodexSession({ resume: null, approval: null });
    s.due();
    s.observe({ progress: true, thread: "t1" });
    s.observe({ progress: true, turn: { id: "turn-1", running: true } });
    s.userLines("first", "u-1");
    s.userLines("second", "u-2");
    s.observe({ progress: true, turn: { id: "turn-1", running: false } });
    s.observe({ progress: false, answered: { id: "steer:u-1", ok: false } });
    s.observe({ progress: false, answered: { id: "steer:u-2", ok: false } });
    expect(s.due().map(sent)).toMatchObject([
      { method: "turn/start", params: { clientUserMessageId: "u-1" } },
    ]);
    s.observe({ progress: true, turn: { id: "turn-2", running: true } });
    expect(s.due().map(sent)).toMatchObject([
      { method: "turn/steer", params: { clientUserMessageId: "u-2" } },
    ]);
  });

  it("a message given once the turn ended waits for the steers not answered yet: refused, they go first", () => {
    const s = new CodexSession({ resume: null, approval: null });
    s.due();
    s.observe({ progress: true, thread: "t1" });
    s.observe({ progress: true, turn: { id: "turn-1", running: true } });
    expect(s.userLines("steered", "u-1").map(sent)).toMatchObject([{ id: "steer:u-1" }]);
    s.observe({ progress: true, turn: { id: "turn-1", running: false } });
    expect(s.userLines("after the end", "u-2")).toEqual([]);
    s.observe({ progress: false, answered: { id: "steer:u-1", ok: false } });
    expect(s.due().map(sent)).toMatchObject([{ id: "start:u-1" }]);
    s.observe({ progress: true, turn: { id: "turn-2", running: true } });
    expect(s.due().map(sent)).toMatchObject([{ id: "steer:u-2" }]);
  });

  it("an interrupt with no turn running writes nothing", () => {
    const s = new CodexSession({ resume: null, approval: null });
    s.observe({ progress: true, thread: "t1" });
    expect(s.interruptLines("interrupt-x")).toEqual([]);
  });
});

const written = (owed: string[]) => owed.flatMap((unit) => unit.split("\n")).filter((l) => l !== "");

describe("codex's session in an adopter: it asks what its predecessor's writes became before it writes", () => {
  it("with a thread in the backlog: a thread/read probe first; no message until its answer", () => {
    const s = new CodexSession({ resume: null, approval: null, adoption: 1 });
    s.observe({ progress: false, answered: { id: "initialize", ok: true } });
    s.observe({ progress: false, answered: { id: "thread", ok: true }, thread: "t1" });
    s.observe({ progress: true, turn: { id: "turn-1", running: true } });
    const probe = s.due();
    expect(probe[0]?.startsWith("\n"), "a newline ends a line left torn").toBe(true);
    expect(written(probe).map(sent)).toEqual([
      { method: "thread/read", id: "probe:1", params: { threadId: "t1" } },
    ]);
    expect(s.userLines("written before the death", "u-1")).toEqual([]);
    expect(s.userLines("never written", "u-2")).toEqual([]);
    expect(s.due()).toEqual([]);
    // codex answers a thread's requests in order: the start written before the probe answers first.
    s.observe({ progress: false, answered: { id: "steer:u-1", ok: true } });
    expect(s.due()).toEqual([]);
    s.observe({ progress: false, answered: { id: "probe:1", ok: true }, thread: "t1" });
    expect(s.due().map(sent)).toMatchObject([
      {
        method: "turn/steer",
        id: "steer:u-2",
        params: { clientUserMessageId: "u-2", expectedTurnId: "turn-1" },
      },
    ]);
    expect(s.due()).toEqual([]);
  });

  it("an earlier adopter's probe answer is not its own", () => {
    const s = new CodexSession({ resume: null, approval: null, adoption: 2 });
    s.observe({ progress: false, answered: { id: "thread", ok: true }, thread: "t1" });
    expect(written(s.due()).map(sent)[0]).toMatchObject({ id: "probe:2" });
    s.observe({ progress: false, answered: { id: "probe:1", ok: true } });
    expect(s.userLines("m", "u-1")).toEqual([]);
  });

  it("without a thread: a probe initialize; the opening's answer before it means the opening was read — no second thread", () => {
    const s = new CodexSession({ resume: null, approval: null, adoption: 1 });
    expect(written(s.due()).map(sent)).toMatchObject([{ method: "initialize", id: "probe:1" }]);
    expect(s.due()).toEqual([]);
    s.observe({ progress: false, answered: { id: "initialize", ok: true } });
    s.observe({ progress: false, answered: { id: "probe:1", ok: false } });
    expect(s.due()).toEqual([]);
    expect(s.userLines("the brief", "u-b")).toEqual([]);
    s.observe({ progress: false, answered: { id: "thread", ok: true }, thread: "t1" });
    expect(s.due().map(sent)).toMatchObject([{ method: "turn/start", id: "start:u-b" }]);
  });

  it("without a thread: no opening answered before the probe's means none was written: it opens, once", () => {
    const s = new CodexSession({ resume: null, approval: null, adoption: 1 });
    s.due();
    s.observe({ progress: false, answered: { id: "probe:1", ok: true } });
    const opening = s.due();
    expect(opening.length).toBe(1);
    expect(written(opening).map((l) => sent(l).method)).toEqual([
      "initialize",
      "initialized",
      "thread/start",
    ]);
    expect(s.due()).toEqual([]);
  });

  it("with the opening answered in the backlog and no thread yet: waits for the thread", () => {
    const s = new CodexSession({ resume: null, approval: null, adoption: 1 });
    s.observe({ progress: false, answered: { id: "initialize", ok: true } });
    expect(written(s.due()).map(sent)).toMatchObject([{ method: "initialize", id: "probe:1" }]);
    s.observe({ progress: false, answered: { id: "probe:1", ok: false } });
    expect(s.due()).toEqual([]);
  });
});

describe("codex's answers to the server's requests", () => {
  it("a command's approval: accept or decline, as the recorded answers codex ran and refused", () => {
    const answers = objects("approval", "in").filter((m) => m.result !== undefined);
    const request = { id: 0, method: "item/commandExecution/requestApproval" };
    expect(sent(steer.responseLine(request, {}, { allow: false, text: null, why: "no" }))).toEqual(
      answers[0],
    );
    expect(
      sent(steer.responseLine({ ...request, id: 1 }, {}, { allow: true, text: null, why: null })),
    ).toEqual(answers[1]);
  });

  it("a question: the text answers its first question; declined, it answers none", () => {
    const request = { id: 7, method: "item/tool/requestUserInput" };
    const input = { questions: [{ id: "db", question: "Which database?" }] };
    expect(sent(steer.responseLine(request, input, { allow: true, text: "postgres", why: null }))).toEqual({
      id: 7,
      result: { answers: { db: { answers: ["postgres"] } } },
    });
    expect(sent(steer.responseLine(request, input, { allow: false, text: null, why: null }))).toEqual({
      id: 7,
      result: { answers: {} },
    });
  });
});
