import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { Sent } from "../../src/cli/send-command.js";
import { sendMessage } from "../../src/dispatch/steer/send.js";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { readJson, tempDir } from "../helpers/folders.js";
import { FAKE_CLAUDE, useSteeredDispatches } from "../helpers/steering.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// Messages to a dispatch that is not running (specs/steering.md, "The inbox"): one waiting in its run's
// queue, and one that has ended. Nothing sent stays queued past the dispatch's end, and every refusal is
// in the words of what the user ran.

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

async function send(s: Setup, args: string[]): Promise<Sent["sent"]> {
  const result = await runCli(["send", ...args, "--json"], { env: s.env });
  if (result.code !== 0) throw new Error(`send failed (${result.code}): ${result.stderr}`);
  return (JSON.parse(result.stdout) as Sent).sent;
}

/** What the "model" saw, in order. */
function seen(s: Setup): string[] {
  if (!fs.existsSync(s.log)) return [];
  const lines = fs.readFileSync(s.log, "utf8").trim().split("\n");
  return lines.filter((l) => l !== "").map((l) => (JSON.parse(l) as { text: string }).text);
}

/** A steerable dispatch `qw` waiting in the run's queue behind `blocker`, which holds the run's one slot. */
async function queuedBehindBlocker(s: Setup) {
  await steered.dispatch(s.env, "blocker", "[tool:60000] hold the slot", [
    "--steerable",
    "--max-parallel",
    "1",
  ]);
  const qw = await steered.dispatch(s.env, "qw", "hello", ["--steerable", "--queue"]);
  expect(fs.existsSync(path.join(qw.dir, "queued.json"))).toBe(true);
  return qw;
}

describe("a message to a dispatch waiting in its run's queue", () => {
  it("is failed when the dispatch is cancelled: send --wait returns with that, and the record counts it", async () => {
    const s = setup();
    const qw = await queuedBehindBlocker(s);
    try {
      const first = await send(s, ["qw", "one more thing"]);
      expect(first).toMatchObject({ state: "queued", dispatchId: qw.dispatchId });
      const waiting = runCli(["send", "qw", "and this", "--wait", "--json"], { env: s.env });
      await waitFor("the second message to be written", () =>
        fs.readdirSync(path.join(qw.dir, "inbox")).filter((n) => /Z-[0-9a-z]{6}\.json$/.test(n)).length === 2
          ? true
          : undefined,
      );
      expect((await runCli(["cancel", "qw"], { env: s.env })).code).toBe(0);
      const waited = await waiting;
      expect(waited.code, waited.stderr).toBe(0);
      expect((JSON.parse(waited.stdout) as Sent).sent).toMatchObject({
        state: "failed",
        why: "the dispatch was cancelled",
      });
      const receipt = readJson(path.join(qw.dir, "inbox", `${first.id}.state.json`));
      expect(receipt).toMatchObject({ state: "failed" });
      const record = readJson(path.join(qw.dir, "record.json"));
      expect(record).toMatchObject({ status: "cancelled" });
      expect((record.steering as { messages: unknown }).messages).toEqual({
        queued: 0,
        delivered: 0,
        acted: 0,
        failed: 2,
      });
      // A send after the cancel: refused in send's words — no flag the user never typed.
      const after = await runCli(["send", "qw", "again"], { env: s.env });
      expect(after.code).toBe(2);
      expect(after.stderr).toMatch(
        /^error E_INPUT_INVALID: qw has ended and cannot be followed up: it never started \(\S+ ended cancelled before its CLI ran\)\nfix: dispatch it anew with --name qw/,
      );
      expect(after.stderr).not.toContain("--follow-up");
    } finally {
      await runCli(["cancel", "blocker", "--wait"], { env: s.env });
    }
  });

  it("send --wait that runs out says the dispatch is still queued, and names it in its fix", async () => {
    const s = setup();
    const qw = await queuedBehindBlocker(s);
    try {
      const request = { text: "are you there?", interrupt: false, from: "test" };
      await expect(sendMessage(qw.dir, request, { wait: true, timeoutMs: 300 })).rejects.toMatchObject({
        code: "E_TIMEOUT",
        message: expect.stringMatching(
          /^message \S+ was not delivered within 0 s: qw is still queued in its run, and the message waits for it to start$/,
        ),
        fix: "it stays queued: catherd show qw says where it stands",
      });
    } finally {
      await runCli(["cancel", "qw", "--wait"], { env: s.env });
      await runCli(["cancel", "blocker", "--wait"], { env: s.env });
    }
  });
});

describe("messages to an ended steerable dispatch", () => {
  it("a send that finds another send's follow-up started joins that turn's inbox instead of being refused", async () => {
    const s = setup();
    const first = await steered.dispatch(s.env, "conv", "first", ["--steerable"]);
    await waitForJson(path.join(first.dir, "record.json"), 30_000);
    const followUp = await send(s, ["conv", "[tool:wait] second"]);
    const turn = followUp.followUp as { dispatchId: string; dir: string };
    steered.track(turn.dispatchId);
    // Sent to the ended turn itself (its folder), as a send that looked just before the follow-up did.
    const joined = await send(s, [first.dir, "third"]);
    expect(joined).toMatchObject({ dispatchId: turn.dispatchId, followUp: null, state: "queued" });
    expect(joined.why).toBe(
      `conv had ended and another send followed it up: the message joins that turn, ${turn.dispatchId}`,
    );
    const record = await waitForJson(path.join(turn.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok", reply: "done: [tool:wait] second | third" });
    expect(seen(s)).toEqual(["first", "[tool:wait] second", "third"]);
  });

  it("of sends at the same moment, one starts a follow-up and the others join it: none is refused, none lost", async () => {
    const s = setup();
    const first = await steered.dispatch(s.env, "many", "first", ["--steerable", "--keep-open", "3s"]);
    await waitForJson(path.join(first.dir, "record.json"), 30_000);
    const texts = ["a", "b", "c", "d"];
    const sent = await Promise.all(texts.map((t) => send(s, ["many", t])));
    const followUps = sent.filter((m) => m.followUp !== null);
    expect(followUps).toHaveLength(1);
    const turn = followUps[0]?.followUp as { dispatchId: string; dir: string };
    steered.track(turn.dispatchId);
    for (const m of sent) expect(m.dispatchId).toBe(turn.dispatchId);
    await waitForJson(path.join(turn.dir, "record.json"), 30_000);
    expect(seen(s).slice(1).sort()).toEqual(texts);
    const turns = fs.readdirSync(path.dirname(first.dir)).filter((n) => n !== "latest");
    expect(turns.sort()).toEqual([first.dispatchId, turn.dispatchId].sort());
  });
});
