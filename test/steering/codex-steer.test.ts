import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { readJson } from "../helpers/folders.js";
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

// A steerable codex dispatch end to end (specs/steering.md, "Which backends"): a stand-in for `codex
// app-server` that fails where the real one fails (test/fixtures/fake-codex-app-server.mjs), supervised
// for real, talked to with `catherd send` and `catherd answer`.

const steered = useSteeredDispatches();
const CODEX = { binEnv: "CATHERD_CODEX_BIN", file: "fake-codex-app-server.mjs", logEnv: "FAKE_CODEX_LOG" };
const setup = (): StandIn => standIn("codex", CODEX);
const dispatch = (s: StandIn, name: string, brief: string, extra: string[]) =>
  dispatchStandIn(steered, s, { name, brief, extra });
const send = (s: StandIn, args: string[]) => sendMessage(s.env, args);
const seen = (s: StandIn) => modelSaw(s.log);
const states = receiptStates;

describe("a steerable codex dispatch over its app-server", () => {
  it("a message sent while a command runs is steered into that turn, once, and receipted by its echo", async () => {
    const s = setup();
    const d = await dispatch(s, "steer", "[tool:wait] fix the test", ["--steerable"]);
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 20_000);
    const sent = await send(s, ["steer", "also update the docs"]);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({
      status: "ok",
      reply: "done: [tool:wait] fix the test | also update the docs",
    });
    expect(seen(s).map((m) => m.text)).toEqual(["[tool:wait] fix the test", "also update the docs"]);
    expect(states(d.dir, sent.id as string)).toEqual(["queued", "delivered", "acted"]);
    // The thread is the dispatch's thread; the thread's usage was counted.
    expect(record.thread).toBe("01a24b86-d574-75f3-9143-eedd2f7a9b2a");
    expect((record.tokens as { input: number }).input).toBe(100);
  });

  it("--interrupt stops the running turn and the message starts the next: the interrupted turn decides nothing", async () => {
    const s = setup();
    const d = await dispatch(s, "redirect", "[tool:60000] a long job", ["--steerable"]);
    await eventsHold(d.dir, '"type":"commandExecution"');
    const sent = await send(s, ["redirect", "do the short one instead", "--interrupt"]);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok", reply: "done: do the short one instead" });
    const events = fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8");
    expect(events).toContain('"status":"interrupted"');
    expect(states(d.dir, sent.id as string)).toEqual(["queued", "delivered", "acted"]);
    expect(seen(s).map((m) => m.text)).toEqual(["[tool:60000] a long job", "do the short one instead"]);
  });

  it("with --keep-open, a message after the turn's end is the next turn/start of the same thread", async () => {
    const s = setup();
    const d = await dispatch(s, "open", "first", ["--keep-open", "30s"]);
    await eventsHold(d.dir, '"method":"turn/completed"');
    const sent = await send(s, ["open", "second", "--wait"]);
    expect(["delivered", "acted"]).toContain(sent.state);
    await eventsHold(d.dir, '"method":"turn/completed"', 2);
    expect((await runCli(["cancel", "open", "--wait"], { env: s.env })).code).toBe(0);
    expect(readJson(path.join(d.dir, "record.json")).reply).toBe("done: second");
    expect(seen(s).map((m) => m.text)).toEqual(["first", "second"]);
  });

  it("a command's approval is a question: the deny declines it, and the turn goes on", async () => {
    const s = setup();
    const d = await dispatch(s, "ask", "[tool:100] run it", ["--on-question", "wait 1m"]);
    const q1 = await waitForJson(path.join(d.dir, "questions", "q1.json"), 20_000);
    expect(q1).toMatchObject({ kind: "permission", tool: "commandExecution", request: { id: 0 } });
    expect(q1.asks).toBe("$ sleep 0.1");
    const denied = await runCli(["answer", "ask", "q1", "--deny", "--json"], { env: s.env });
    expect(denied.code, denied.stderr).toBe(0);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok", reply: "done: [tool:100] run it | declined" });
    expect(fs.existsSync(path.join(d.dir, "questions", "q1.delivered.json"))).toBe(true);
  });

  it("an approval the app-server withdraws (its turn interrupted) closes its question: the dispatch does not wait on it", async () => {
    const s = setup();
    const d = await dispatch(s, "withdrawn", "[tool:60000] a long job", ["--on-question", "wait 1m"]);
    await waitForJson(path.join(d.dir, "questions", "q1.json"), 20_000);
    await send(s, ["withdrawn", "do the short one instead", "--interrupt"]);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok", reply: "done: do the short one instead" });
    const answer = readJson(path.join(d.dir, "questions", "q1.answer.json"));
    expect(answer).toMatchObject({ allow: false, by: "cli" });
    expect(String(answer.why)).toMatch(/withdrawn by the CLI/);
  });

  it("a question of the agent's is answered with the text given", async () => {
    const s = setup();
    const d = await dispatch(s, "question", "[question] pick one", ["--on-question", "wait 1m"]);
    const q1 = await waitForJson(path.join(d.dir, "questions", "q1.json"), 20_000);
    expect(q1).toMatchObject({ kind: "question", asks: "Which database?" });
    const answered = await runCli(["answer", "question", "q1", "postgres", "--json"], { env: s.env });
    expect(answered.code, answered.stderr).toBe(0);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record.reply).toBe('done: [question] pick one | answer: {"db":{"answers":["postgres"]}}');
  });

  it("two messages sent mid-command each reach the model once, in order", async () => {
    const s = setup();
    // Kept open: the first message may end the command and its turn before the second is sent.
    const d = await dispatch(s, "two", "[tool:wait] fix the test", ["--keep-open", "30s"]);
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 20_000);
    const first = await send(s, ["two", "one more"]);
    const second = await send(s, ["two", "and another"]);
    await waitFor("both to be acted on", () =>
      [first, second].every((m) => states(d.dir, m.id as string).at(-1) === "acted") ? true : undefined,
    );
    expect((await runCli(["cancel", "two", "--wait"], { env: s.env })).code).toBe(0);
    expect(seen(s).map((m) => m.text)).toEqual(["[tool:wait] fix the test", "one more", "and another"]);
    // The second joins the first's turn, or (that turn over by then) starts the next: the reply is the last.
    expect(readJson(path.join(d.dir, "record.json")).reply).toMatch(/^done: .*and another$/);
  });

  it("a thread codex cannot resume fails the dispatch at once, as exec resume does: kind resume", async () => {
    const s = setup();
    const bogus = "7d4e1c2a-0b3f-4a5e-9c8d-2f1e0a9b8c7d";
    const d = await dispatch(s, "bogus", "go on", ["--steerable", "--thread", bogus]);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "failed", error: { kind: "resume" } });
    expect(seen(s)).toEqual([]);
  });

  it("a send to the ended dispatch follows it up on the same thread (thread/resume), steerable", async () => {
    const s = setup();
    const d = await dispatch(s, "done", "first", ["--steerable"]);
    await waitForJson(path.join(d.dir, "record.json"), 30_000);
    const sent = await send(s, ["done", "and then this"]);
    const followUp = sent.followUp as { dispatchId: string; dir: string };
    steered.track(followUp.dispatchId);
    const record = await waitForJson(path.join(followUp.dir, "record.json"), 30_000);
    expect(record).toMatchObject({
      status: "ok",
      reply: "done: and then this",
      thread: "01a24b86-d574-75f3-9143-eedd2f7a9b2a",
    });
    const events = fs.readFileSync(path.join(followUp.dir, "events.jsonl"), "utf8");
    expect(events).toContain('"id":"thread","result"');
    expect(readJson(path.join(followUp.dir, "spec.json")).steer).toEqual({
      keepOpenMs: null,
      onQuestion: null,
    });
  });
});
