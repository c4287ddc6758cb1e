import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { Sent } from "../../src/cli/send-command.js";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { readJson, tempDir } from "../helpers/folders.js";
import { FAKE_CLAUDE, useSteeredDispatches } from "../helpers/steering.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// Talking to a running agent (specs/steering.md) with real processes: a stand-in that speaks Claude
// Code's stream-json input protocol as recorded (test/fixtures/fake-claude-stream.mjs), supervised for
// real, messages sent with `catherd send`.

const steered = useSteeredDispatches();

interface Setup {
  env: NodeJS.ProcessEnv;
  log: string;
}

function setup(): Setup {
  const { env } = isolatedHome();
  const log = path.join(tempDir(), "model.log");
  return { env: { ...env, CATHERD_CLAUDE_BIN: FAKE_CLAUDE, FAKE_CLAUDE_LOG: log }, log };
}

function dispatch(s: Setup, name: string, brief: string, extra: string[] = []) {
  return steered.dispatch(s.env, name, brief, extra);
}

async function send(s: Setup, args: string[]): Promise<Sent["sent"]> {
  const result = await runCli(["send", ...args, "--json"], { env: s.env });
  if (result.code !== 0) throw new Error(`send failed (${result.code}): ${result.stderr}`);
  return (JSON.parse(result.stdout) as Sent).sent;
}

/** Resolves once the dispatch's events.jsonl holds `text` `times` times. */
function eventsHold(dir: string, text: string, times = 1): Promise<true> {
  return waitFor(`events.jsonl to hold ${text} ×${times}`, () => {
    const file = path.join(dir, "events.jsonl");
    const events = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
    return events.split(text).length - 1 >= times ? true : undefined;
  });
}

/** What the "model" saw, in order: one entry per message it was given. */
function seen(s: Setup): { uuid: string | null; text: string }[] {
  if (!fs.existsSync(s.log)) return [];
  return fs
    .readFileSync(s.log, "utf8")
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { uuid: string | null; text: string });
}

describe("catherd send", () => {
  it("delivers a message sent while a tool runs into the same turn, once, and receipts it", async () => {
    const s = setup();
    const d = await dispatch(s, "steer", "[tool:wait] fix the test", ["--steerable"]);
    // The brief is the first message the model sees; then the tool runs.
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 20_000);
    const sent = await send(s, ["steer", "also update the docs"]);
    expect(sent.state).toBe("queued");
    expect(sent.id).toMatch(/^\d{8}T\d{9}Z-[0-9a-z]{6}$/);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record.status).toBe("ok");
    expect(record.reply).toBe("done: [tool:wait] fix the test | also update the docs");
    expect(seen(s).map((m) => m.text)).toEqual(["[tool:wait] fix the test", "also update the docs"]);
    const receipt = readJson(path.join(d.dir, "inbox", `${sent.id}.state.json`));
    expect(receipt.state).toBe("acted");
    expect((receipt.history as { state: string }[]).map((h) => h.state)).toEqual([
      "queued",
      "delivered",
      "acted",
    ]);
  });
});

describe("a steerable dispatch's turns", () => {
  it("ends by asking the CLI to end its session once its turn is over: it exits by itself, ok", async () => {
    const s = setup();
    const d = await dispatch(s, "plain", "say hello", ["--steerable"]);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok", reason: "exited", reply: "done: say hello" });
    expect(fs.readFileSync(path.join(d.dir, "supervisor.log"), "utf8")).toContain('"end-session"');
  });

  it("with --keep-open, a message sent after the turn ended starts the next turn in the same session", async () => {
    const s = setup();
    const d = await dispatch(s, "open", "first", ["--keep-open", "30s"]);
    // The first turn ends; the dispatch waits (neither idle nor wall time) for the next message.
    await eventsHold(d.dir, '"type":"result"');
    const sent = await send(s, ["open", "second", "--wait"]);
    expect(["delivered", "acted"]).toContain(sent.state);
    await eventsHold(d.dir, '"type":"result"', 2);
    // Nothing more comes: cancel ends it (the window is 30 s); the record shows the second turn's reply.
    expect((await runCli(["cancel", "open", "--wait"], { env: s.env })).code).toBe(0);
    const record = readJson(path.join(d.dir, "record.json"));
    expect(record.reply).toBe("done: second");
    expect(seen(s).map((m) => m.text)).toEqual(["first", "second"]);
    expect(readJson(path.join(d.dir, "exit.json")).keptOpenMs).toBeGreaterThan(0);
  });

  it("--interrupt stops the running turn and the message starts the next: the interrupted turn decides nothing", async () => {
    const s = setup();
    const d = await dispatch(s, "redirect", "[tool:60000] a long job", ["--steerable"]);
    await eventsHold(d.dir, '"tool_use"');
    const sent = await send(s, ["redirect", "do the short one instead", "--interrupt"]);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok", reason: "exited", reply: "done: do the short one instead" });
    const events = fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8");
    expect(events).toContain('"subtype":"error_during_execution"');
    expect(readJson(path.join(d.dir, "inbox", `${sent.id}.state.json`)).state).toBe("acted");
    expect(fs.readFileSync(path.join(d.dir, "supervisor.log"), "utf8")).toContain('"interrupted"');
  });

  it("marks a message it could not deliver failed when the dispatch is cancelled", async () => {
    const s = setup();
    const d = await dispatch(s, "gone", "[tool:60000] a long job", ["--steerable"]);
    await eventsHold(d.dir, '"tool_use"');
    // Written while the tool runs: the CLI takes it only after the tool's result, which never comes.
    const sent = await send(s, ["gone", "one more thing"]);
    expect((await runCli(["cancel", "gone", "--wait"], { env: s.env })).code).toBe(0);
    const receipt = readJson(path.join(d.dir, "inbox", `${sent.id}.state.json`));
    expect(receipt).toMatchObject({ state: "failed" });
    expect((receipt.history as { why?: string }[]).at(-1)?.why).toBe("the dispatch was cancelled");
  });
});

describe("send refuses what cannot take a message, and follows up what has ended", () => {
  it("refuses a dispatch not started steerable, and exec, naming what each supports", async () => {
    const s = setup();
    const d = await dispatch(s, "fixed", "[tool:60000] a long job", []);
    await waitFor("it to run", () => (fs.existsSync(path.join(d.dir, "proc.json")) ? true : undefined));
    const refused = await runCli(["send", "fixed", "more"], { env: s.env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/E_NOT_STEERABLE: fixed was not started steerable/);
    expect(refused.stderr).toMatch(/--steerable/);
    expect((await runCli(["cancel", "fixed", "--wait"], { env: s.env })).code).toBe(0);
    const exec = await runCli(["dispatch", "--backend", "exec", "--steerable", "--", "true"], { env: s.env });
    expect(exec.code).toBe(2);
    expect(exec.stderr).toMatch(/--steerable: catherd cannot talk to a running exec agent/);
  });

  it("turns a message to an ended dispatch into a follow-up turn on its thread, and says so", async () => {
    const s = setup();
    const d = await dispatch(s, "done", "first", ["--steerable"]);
    await waitForJson(path.join(d.dir, "record.json"), 30_000);
    const sent = await send(s, ["done", "and then this"]);
    expect(sent.id).toBeNull();
    expect(sent.why).toMatch(/had ended: the message is the brief of a follow-up turn/);
    expect(sent.followUp).not.toBeNull();
    const followUp = sent.followUp as { dispatchId: string; dir: string };
    steered.track(followUp.dispatchId);
    const record = await waitForJson(path.join(followUp.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok", reply: "done: and then this" });
    // The conversation stays steerable.
    expect(readJson(path.join(followUp.dir, "spec.json")).steer).toEqual({
      keepOpenMs: null,
      onQuestion: null,
    });
  });
});

describe("a steerable chain", () => {
  it("hands its steer settings to the next attempt where that CLI can be talked to", async () => {
    const s = setup();
    const env = { ...s.env, FAKE_CLAUDE_FAIL_ONCE: path.join(tempDir(), "failed-once") };
    const first = await dispatch({ ...s, env }, "ladder", "fix it", [
      "--on-question",
      "deny",
      "--fallback",
      "claude-code",
    ]);
    const record = await waitForJson(path.join(first.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "failed", next: { backend: "claude-code", why: "failover" } });
    const next = await waitFor(
      "the next attempt's record",
      () => {
        const attempts = fs
          .readdirSync(path.dirname(first.dir))
          .filter((id) => id !== first.dispatchId && /^\d{8}T\d{6}Z-/.test(id));
        const dir = attempts.length === 1 ? path.join(path.dirname(first.dir), attempts[0] ?? "") : null;
        return dir !== null && fs.existsSync(path.join(dir, "record.json")) ? dir : undefined;
      },
      30_000,
    );
    steered.track(path.basename(next));
    expect(readJson(path.join(next, "record.json"))).toMatchObject({
      status: "ok",
      attempt: 2,
      reply: "done: fix it",
    });
    expect(readJson(path.join(next, "spec.json")).steer).toEqual({
      keepOpenMs: null,
      onQuestion: { policy: "deny", waitMs: 0 },
    });
  });
});
