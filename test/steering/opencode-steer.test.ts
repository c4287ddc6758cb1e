import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ROOT, readJson, tempDir } from "../helpers/folders.js";
import {
  dispatchStandIn,
  eventsHold,
  modelSaw,
  receiptStates,
  type StandIn,
  sendMessage,
  standIn,
  useSteeredDispatches,
} from "../helpers/steering.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// A steerable opencode dispatch end to end (specs/steering.md, "Which backends"): catherd's bridge running
// a stand-in for `opencode serve` that fails where the real one fails (test/fixtures/fake-opencode-serve.mjs),
// supervised for real, talked to with `catherd send` and `catherd answer`.

const steered = useSteeredDispatches();
const FAKE_OPENCODE = path.join(ROOT, "test/fixtures/fake-opencode-serve.mjs");
const OPENCODE = {
  binEnv: "CATHERD_OPENCODE_BIN",
  file: "fake-opencode-serve.mjs",
  logEnv: "FAKE_OPENCODE_LOG",
};

/** The stand-in's home, with a work folder of its own (the dispatch's --cwd) and opencode's data folder. */
function setup(): StandIn & { cwd: string } {
  const dir = tempDir();
  const cwd = path.join(dir, "work");
  fs.mkdirSync(cwd);
  return { ...standIn("opencode", OPENCODE, { XDG_DATA_HOME: path.join(dir, "data") }), cwd };
}

const dispatch = (s: StandIn & { cwd: string }, name: string, brief: string, extra: string[]) =>
  dispatchStandIn(steered, s, { name, brief, extra: ["--cwd", s.cwd, ...extra] });
const send = (s: StandIn, args: string[]) => sendMessage(s.env, args);
/** What the "model" took, in order: one entry per prompt. */
const seen = (s: StandIn) => modelSaw(s.log).map((m) => m.text);
const states = receiptStates;

/** The dispatch's record, waited for; on a timeout, the error carries its stream and its supervisor's log. */
async function recordOf(dir: string): Promise<Record<string, unknown>> {
  try {
    return await waitForJson(path.join(dir, "record.json"), 30_000);
  } catch (error) {
    const tail = (name: string) => {
      const file = path.join(dir, name);
      return fs.existsSync(file) ? fs.readFileSync(file, "utf8").slice(-4000) : "(none)";
    };
    const files = ["events.jsonl", "supervisor.log", "stderr.log"].map((n) => `--- ${n}\n${tail(n)}`);
    throw new Error(`${(error as Error).message}\n${files.join("\n")}`);
  }
}

const RUNNING = '"status":"running"';
const IDLE = '"type":"bridge.idle"';

describe("a steerable opencode dispatch over opencode serve", () => {
  it("a message sent while a tool runs joins that turn after its result, once, receipted by its echo", async () => {
    const s = setup();
    const d = await dispatch(s, "steer", "[tool:wait] fix the test", ["--steerable"]);
    await eventsHold(d.dir, RUNNING);
    const sent = await send(s, ["steer", "also update the docs"]);
    const record = await recordOf(d.dir);
    expect(record).toMatchObject({
      status: "ok",
      reply: "done: [tool:wait] fix the test | also update the docs",
    });
    expect(seen(s)).toEqual(["[tool:wait] fix the test", "also update the docs"]);
    expect(states(d.dir, sent.id as string)).toEqual(["queued", "delivered", "acted"]);
    expect(String(record.thread)).toMatch(/^ses_/);
    expect((record.tokens as { input: number }).input).toBe(100);
    expect(readJson(path.join(d.dir, "exit.json"))).toMatchObject({ code: 0 });
  });

  it("--interrupt aborts the running turn and the message starts the next in the same session", async () => {
    const s = setup();
    const d = await dispatch(s, "redirect", "[tool:60000] a long job", ["--steerable"]);
    await eventsHold(d.dir, RUNNING);
    const sent = await send(s, ["redirect", "do the short one instead", "--interrupt"]);
    const record = await recordOf(d.dir);
    expect(record).toMatchObject({ status: "ok", reply: "done: do the short one instead" });
    expect(fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8")).toContain("MessageAbortedError");
    expect(states(d.dir, sent.id as string)).toEqual(["queued", "delivered", "acted"]);
    expect(seen(s)).toEqual(["[tool:60000] a long job", "do the short one instead"]);
  });

  it("with --keep-open, a message after the turn's end is the next prompt of the same session", async () => {
    const s = setup();
    const d = await dispatch(s, "open", "first", ["--keep-open", "30s"]);
    await eventsHold(d.dir, IDLE);
    const sent = await send(s, ["open", "second", "--wait"]);
    expect(["delivered", "acted"]).toContain(sent.state);
    await eventsHold(d.dir, IDLE, 2);
    expect((await runCli(["cancel", "open", "--wait"], { env: s.env })).code).toBe(0);
    expect(readJson(path.join(d.dir, "record.json")).reply).toBe("done: second");
    expect(seen(s)).toEqual(["first", "second"]);
  });

  it("a permission denied (its why reaching the model) then one allowed: the denied file absent, the allowed one made", async () => {
    const s = setup();
    const d = await dispatch(s, "ask", "RUN echo denied > denied.txt", [
      "--on-question",
      "wait 1m",
      "--keep-open",
      "30s",
    ]);
    const q1 = await waitForJson(path.join(d.dir, "questions", "q1.json"), 20_000);
    expect(q1).toMatchObject({ kind: "permission", tool: "bash", asks: "$ echo denied > denied.txt" });
    const denied = await runCli(["answer", "ask", "q1", "--deny", "--why", "not that file", "--json"], {
      env: s.env,
    });
    expect(denied.code, denied.stderr).toBe(0);
    await eventsHold(d.dir, IDLE);
    await send(s, ["ask", "RUN echo allowed > allowed.txt"]);
    await waitForJson(path.join(d.dir, "questions", "q2.json"), 20_000);
    const allowed = await runCli(["answer", "ask", "q2", "--allow", "--json"], { env: s.env });
    expect(allowed.code, allowed.stderr).toBe(0);
    await eventsHold(d.dir, IDLE, 2);
    expect((await runCli(["cancel", "ask", "--wait"], { env: s.env })).code).toBe(0);
    expect(fs.existsSync(path.join(s.cwd, "denied.txt"))).toBe(false);
    expect(fs.readFileSync(path.join(s.cwd, "allowed.txt"), "utf8")).toBe("allowed\n");
    const events = fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8");
    expect(events).toContain("done: RUN echo denied > denied.txt | rejected: not that file");
  });

  it("two messages sent mid-tool each reach the model once, in order", async () => {
    const s = setup();
    const d = await dispatch(s, "two", "[tool:wait] fix the test", ["--keep-open", "30s"]);
    await eventsHold(d.dir, RUNNING);
    const first = await send(s, ["two", "one more"]);
    const second = await send(s, ["two", "and another"]);
    await waitFor("both to be acted on", () =>
      [first, second].every((m) => states(d.dir, m.id as string).at(-1) === "acted") ? true : undefined,
    );
    // The reply naming the second, whichever turn it joined, before the dispatch is ended.
    await eventsHold(d.dir, 'and another","time"');
    expect((await runCli(["cancel", "two", "--wait"], { env: s.env })).code).toBe(0);
    expect(seen(s)).toEqual(["[tool:wait] fix the test", "one more", "and another"]);
    expect(readJson(path.join(d.dir, "record.json")).reply).toMatch(/^done: .*and another$/);
  });

  it("a send to the ended dispatch follows it up in the same session, steerable", async () => {
    const s = setup();
    const d = await dispatch(s, "done", "first", ["--steerable"]);
    const first = await recordOf(d.dir);
    const sent = await send(s, ["done", "and then this"]);
    const followUp = sent.followUp as { dispatchId: string; dir: string };
    steered.track(followUp.dispatchId);
    const record = await recordOf(followUp.dir);
    expect(record).toMatchObject({ status: "ok", reply: "done: and then this", thread: first.thread });
    expect(fs.readFileSync(path.join(followUp.dir, "events.jsonl"), "utf8")).toContain('"resumed":true');
    const spec = readJson(path.join(followUp.dir, "spec.json")) as { steer: unknown; args: string[] };
    expect(spec.steer).toEqual({ keepOpenMs: null, onQuestion: null });
    expect(spec.args[1]).toBe(FAKE_OPENCODE);
  });

  it("a session opencode does not have fails the dispatch at once: kind resume", async () => {
    const s = setup();
    const d = await dispatch(s, "bogus", "go on", [
      "--steerable",
      "--thread",
      "ses_0000000000000000000000bogus",
    ]);
    const record = await recordOf(d.dir);
    expect(record).toMatchObject({ status: "failed", error: { kind: "resume" } });
    expect(seen(s)).toEqual([]);
  });
});
