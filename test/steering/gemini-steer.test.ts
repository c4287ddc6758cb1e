import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { readJson, tempDir } from "../helpers/folders.js";
import {
  dispatchStandIn,
  eventsHold,
  eventsOf,
  modelSaw,
  receiptStates,
  type StandIn,
  sendMessage,
  standIn,
  useSteeredDispatches,
} from "../helpers/steering.js";
import { waitForJson } from "../helpers/wait.js";

// A steerable gemini dispatch end to end (specs/steering.md, "Which backends"): a stand-in for `gemini
// --acp` that fails where the real one fails (test/fixtures/fake-gemini-acp.mjs: a second prompt mid-turn
// cancels the first), supervised for real, talked to with `catherd send` and `catherd answer`.

const steered = useSteeredDispatches();
const GEMINI = { binEnv: "CATHERD_GEMINI_BIN", file: "fake-gemini-acp.mjs", logEnv: "FAKE_GEMINI_LOG" };
const setup = (): StandIn => standIn("gemini", GEMINI);
const dispatch = (s: StandIn, name: string, brief: string, extra: string[]) =>
  dispatchStandIn(steered, s, { name, brief, extra });
const send = (s: StandIn, args: string[]) => sendMessage(s.env, args);
const events = eventsOf;
/** What the "model" saw, in order: one entry per prompt it worked on. */
const seen = (s: StandIn) => modelSaw(s.log).map((m) => m.text);
const states = receiptStates;

describe("a steerable gemini dispatch over ACP", () => {
  it("a message sent while a command runs waits for the turn's end, then is the next prompt: the command's turn is not cancelled", async () => {
    // The command runs until the message is sent (a send is a process of its own, slow on a loaded machine).
    const gate = path.join(tempDir(), "sent");
    const s = standIn("gemini", GEMINI, { FAKE_GEMINI_TOOL_UNTIL: gate });
    const d = await dispatch(s, "midtool", "[tool:1500] fix the test", ["--steerable", "--access", "full"]);
    await eventsHold(d.dir, '"sessionUpdate":"tool_call"');
    const sent = await send(s, ["midtool", "also update the docs"]);
    expect(sent.state).toBe("queued");
    fs.writeFileSync(gate, "");
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok", reply: "done: also update the docs" });
    expect(seen(s)).toEqual(["[tool:1500] fix the test", "also update the docs"]);
    expect(events(d.dir)).toContain("done: [tool:1500] fix the test | ran sleep 1.5");
    expect(events(d.dir)).not.toContain('"stopReason":"cancelled"');
    expect(states(d.dir, sent.id as string)).toEqual(["queued", "delivered", "acted"]);
    expect(record.thread).toBe("91fa730d-fd0f-4b4c-abef-f981f58d0893");
    expect((record.tokens as { input: number }).input).toBe(200);
  });

  it("--interrupt cancels the running prompt and the message is the next: the cancelled turn decides nothing", async () => {
    const s = setup();
    const d = await dispatch(s, "redirect", "[tool:wait] a long job", ["--steerable", "--access", "full"]);
    await eventsHold(d.dir, '"sessionUpdate":"tool_call"');
    const sent = await send(s, ["redirect", "do the short one instead", "--interrupt"]);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok", reply: "done: do the short one instead" });
    expect(events(d.dir)).toContain('"stopReason":"cancelled"');
    expect(states(d.dir, sent.id as string)).toEqual(["queued", "delivered", "acted"]);
    expect(seen(s)).toEqual(["[tool:wait] a long job", "do the short one instead"]);
  });

  it("with --keep-open, a message after the turn's end is the next prompt of the same session", async () => {
    const s = setup();
    const d = await dispatch(s, "open", "first", ["--keep-open", "30s"]);
    await eventsHold(d.dir, '"stopReason":"end_turn"');
    const sent = await send(s, ["open", "second", "--wait"]);
    expect(["delivered", "acted"]).toContain(sent.state);
    await eventsHold(d.dir, '"stopReason":"end_turn"', 2);
    expect((await runCli(["cancel", "open", "--wait"], { env: s.env })).code).toBe(0);
    expect(readJson(path.join(d.dir, "record.json")).reply).toBe("done: second");
    expect(seen(s)).toEqual(["first", "second"]);
  });

  it("a permission ask is a question: denied, the command never runs; the next one allowed, it runs", async () => {
    const s = setup();
    const d = await dispatch(s, "ask", "[tool:100] run it", [
      "--on-question",
      "wait 1m",
      "--keep-open",
      "30s",
    ]);
    const q1 = await waitForJson(path.join(d.dir, "questions", "q1.json"), 20_000);
    expect(q1).toMatchObject({
      kind: "permission",
      asks: "$ sleep 0.1",
      tool: "execute",
      request: { id: 0 },
    });
    expect((await runCli(["answer", "ask", "q1", "--deny"], { env: s.env })).code).toBe(0);
    await eventsHold(d.dir, "canceled by the user");
    await send(s, ["ask", "[tool:100] again"]);
    await waitForJson(path.join(d.dir, "questions", "q2.json"), 20_000);
    expect((await runCli(["answer", "ask", "q2", "--allow"], { env: s.env })).code).toBe(0);
    await eventsHold(d.dir, "ran sleep 0.1");
    expect((await runCli(["cancel", "ask", "--wait"], { env: s.env })).code).toBe(0);
    expect(readJson(path.join(d.dir, "record.json")).reply).toBe("done: [tool:100] again | ran sleep 0.1");
  });

  it("an interrupt while a permission is asked answers it cancelled and closes its question", async () => {
    const s = setup();
    const d = await dispatch(s, "withdrawn", "[tool:100] a job", ["--on-question", "wait 1m"]);
    await waitForJson(path.join(d.dir, "questions", "q1.json"), 20_000);
    await send(s, ["withdrawn", "do the short one instead", "--interrupt"]);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok", reply: "done: do the short one instead" });
    const answer = readJson(path.join(d.dir, "questions", "q1.answer.json"));
    expect(answer).toMatchObject({ allow: false, by: "cli" });
  });

  it("without --on-question an ask is denied at once, as headless gemini denies it: no question", async () => {
    const s = setup();
    const d = await dispatch(s, "headless", "[tool:100] run it", ["--steerable"]);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record.reply).toBe('done: [tool:100] run it | Tool "run_shell_command" was canceled by the user.');
    expect(fs.existsSync(path.join(d.dir, "questions", "q1.json"))).toBe(false);
  });

  it("two messages sent mid-command each reach the model once, in order, each a prompt of its own", async () => {
    // The command runs until both are sent (each send is a process of its own, slow on a loaded machine).
    const gate = path.join(tempDir(), "sent");
    const s = standIn("gemini", GEMINI, { FAKE_GEMINI_TOOL_UNTIL: gate });
    const d = await dispatch(s, "two", "[tool:1500] fix the test", ["--steerable", "--access", "full"]);
    await eventsHold(d.dir, '"sessionUpdate":"tool_call"');
    const first = await send(s, ["two", "one more"]);
    const second = await send(s, ["two", "and another"]);
    fs.writeFileSync(gate, "");
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(seen(s)).toEqual(["[tool:1500] fix the test", "one more", "and another"]);
    for (const m of [first, second])
      expect(states(d.dir, m.id as string)).toEqual(["queued", "delivered", "acted"]);
    expect(record.reply).toBe("done: and another");
  });

  it("a follow-up loads the session by its load key and stays steerable: the earlier turn replayed, not its reply", async () => {
    const s = setup();
    const d = await dispatch(s, "done", "first", ["--steerable"]);
    await waitForJson(path.join(d.dir, "record.json"), 30_000);
    const sent = await send(s, ["done", "and then this"]);
    const followUp = sent.followUp as { dispatchId: string; dir: string };
    steered.track(followUp.dispatchId);
    const record = await waitForJson(path.join(followUp.dir, "record.json"), 30_000);
    const why = events(followUp.dir);
    expect(record, why).toMatchObject({ status: "ok", reply: "done: and then this" });
    expect(record.thread).toBe("91fa730d-fd0f-4b4c-abef-f981f58d0893");
    expect(readJson(path.join(followUp.dir, "spec.json")).steer).not.toBeUndefined();
    // The history gemini replays after the load's answer is no reply of this turn.
    expect(why).toContain('"sessionUpdate":"user_message_chunk"');
    expect(seen(s)).toEqual(["first", "and then this"]);
  });
});
