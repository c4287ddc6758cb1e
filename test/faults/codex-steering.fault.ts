import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { readJson } from "../helpers/folders.js";
import { killPid } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";
import {
  dispatchSteered,
  killAndAdopt,
  logLines,
  pausedAt,
  receipt,
  recordedOk,
  type Steered,
  seen,
  send,
  steeredHome,
} from "./codex-steered.js";
import { type Dispatched, type Trial, trial, useFaultKit, waitGone } from "./kit.js";

// Row 16 for codex: rows 16a–16d of steering.fault.ts for a steerable codex over its app-server (16a is
// row 16e; its adopter's probes, rows 16f and 16g, are codex-adopter.fault.ts). codex dedupes nothing, so
// the adopter must know what codex already took: its answer to the supervisor's turn/start or turn/steer
// (src/backends/codex-steer.ts).

useFaultKit();

/** The message's receipt before the kill is none; the adopter ends the dispatch with it seen once, acted. */
async function adoptAndFinish(t: Trial, s: Steered, d: Dispatched, killed: number, id: string) {
  const adopter = await killAndAdopt(t, s, d, killed);
  const record = await recordedOk(d, adopter);
  expect(
    seen(s).map((m) => m.text),
    "what the model saw",
  ).toEqual(["[tool:4000] work", "also the docs"]);
  expect(receipt(d.dir, id)?.state).toBe("acted");
  return record;
}

/** Sends "also the docs" once the brief was taken; its id. */
async function sendMidTool(s: Steered, name: string): Promise<string> {
  await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 30_000);
  return send(s, name, "also the docs", { ...s.env, CATHERD_TEST_ONLY_PAUSE_AT: "" });
}

describe("rows 16e, 16b for codex: a supervisor killed between giving a message and its receipt", () => {
  it("(pause hook) the adopter sees codex took it and does not give it again: seen once, acted", async () => {
    const t = trial(
      "16e codex: supervisor SIGKILLed between a message's delivery and its receipt (pause hook)",
    );
    const s = steeredHome(t, { CATHERD_TEST_ONLY_PAUSE_AT: "message-written" });
    const d = await dispatchSteered(t, s, "codex-kill", "[tool:4000] work");
    const id = await sendMidTool(s, "codex-kill");
    const pid = await pausedAt(d.dir, "message-written");
    expect(pid).toBe(d.supervisorPid);
    expect(receipt(d.dir, id), "a receipt written before the kill").toBeNull();
    // codex answered the steer (it has the message) before the kill: the adopter reads that answer.
    await waitFor("codex's answer to the steer", () =>
      fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8").includes('"id":"steer:') ? true : undefined,
    );
    await adoptAndFinish(t, s, d, pid, id);
    t.pass();
  });

  it("(no hook: killed at its message-written log line, while the tool runs) the same", async () => {
    const t = trial(
      "16b codex: supervisor SIGKILLed between a message's delivery and its receipt (at its log line)",
    );
    const s = steeredHome(t);
    const d = await dispatchSteered(t, s, "codex-kill", "[tool:4000] work");
    const id = await sendMidTool(s, "codex-kill");
    // codex echoes the steered message only once the command ends, 4 s after the brief: once the
    // supervisor says it wrote it, its receipt cannot have been written yet.
    await waitFor(
      "the message written to the channel",
      () => (logLines(d.dir, "message-written").some((l) => l.message === id) ? true : undefined),
      30_000,
    );
    killPid(d.supervisorPid);
    expect(receipt(d.dir, id), "a receipt written before the kill").toBeNull();
    await adoptAndFinish(t, s, d, d.supervisorPid, id);
    t.note(
      `message ${receipt(d.dir, id)
        ?.history.map((h) => h.state)
        .join("→")}`,
    );
    t.pass();
  });
});

/** The uuid catherd gives a message (supervisor/steering.ts `uuidOf`), recomputed: the log names it. */
function uuidOf(dispatchId: string, id: string): string {
  const hex = createHash("sha256").update(`${dispatchId}/${id}`).digest("hex");
  const variant = ((Number.parseInt(hex[16] ?? "0", 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const SENDERS = 10;
const PER_SENDER = 10;

/** SENDERS loops of PER_SENDER `catherd send` each, at once: each message's id and text. */
async function crowdSends(s: Steered, name: string): Promise<{ id: string; text: string }[]> {
  const sent: { id: string; text: string }[] = [];
  const loops = Array.from({ length: SENDERS }, async (_, p) => {
    for (let i = 0; i < PER_SENDER; i++) {
      const text = `sender ${p} message ${i}`;
      sent.push({ id: await send(s, name, text), text });
    }
  });
  await Promise.all(loops);
  return sent;
}

describe("row 16c for codex: a hundred messages from ten senders at once", () => {
  it("gives each once, in the order of their ids, steered or starting the next turn", async () => {
    const t = trial("16c codex: 100 messages sent to one dispatch by 10 concurrent senders");
    const s = steeredHome(t);
    const d = await dispatchSteered(t, s, "codex-crowd", "[tool:3000] start", ["--keep-open", "60s"]);
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 30_000);
    const startedAt = Date.now();
    const sent = await crowdSends(s, "codex-crowd");
    expect(new Set(sent.map((m) => m.id)).size, "every message its own id").toBe(SENDERS * PER_SENDER);
    await waitFor(
      "every receipt acted",
      () => (sent.every((m) => receipt(d.dir, m.id)?.state === "acted") ? true : undefined),
      120_000,
    );
    t.note(`${sent.length} sent, all acted ${Date.now() - startedAt} ms after the first send`);
    const cancel = await runCli(["cancel", "codex-crowd", "--wait"], { env: s.env, timeoutMs: 60_000 });
    expect(cancel.code, cancel.stderr).toBe(0);
    await waitGone(d.supervisorPid, 30_000);
    expect(readJson(path.join(d.dir, "record.json")).status).toBe("cancelled");
    const log = seen(s);
    expect(log[0]?.text).toBe("[tool:3000] start");
    const rest = log.slice(1);
    expect(rest.length, "messages the model saw (besides the brief)").toBe(sent.length);
    const byText = new Map(sent.map((m) => [m.text, m.id]));
    for (const r of rest) expect(r.uuid, r.text).toBe(uuidOf(d.dispatchId, byText.get(r.text) ?? ""));
    const seenIds = rest.map((r) => byText.get(r.text) as string);
    expect(new Set(seenIds).size, "each seen once").toBe(sent.length);
    expect(seenIds, "the order the model saw the messages in, against their ids").toEqual(
      [...seenIds].sort(),
    );
    t.pass();
  });
});

describe("row 16d for codex: a torn message file in inbox/", () => {
  it("fails the torn one, saying it is not a message, and gives the good one", async () => {
    const t = trial("16d codex: a torn inbox/<id>.json beside a good message");
    const s = steeredHome(t);
    const d = await dispatchSteered(t, s, "codex-torn", "[tool:4000] work");
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 30_000);
    const tornId = "20261202T060000000Z-aaaaaa";
    fs.mkdirSync(path.join(d.dir, "inbox"), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(d.dir, "inbox", `${tornId}.json`), '{"schema":1,"id":', { mode: 0o600 });
    const good = await send(s, "codex-torn", "the good one");
    expect(good > tornId, "the good message sorts after the torn one").toBe(true);
    const show = await runCli(["show", "codex-torn", "--json"], { env: s.env, timeoutMs: 30_000 });
    expect(show.code, show.stderr).toBe(0);
    const record = await waitForJson(path.join(d.dir, "record.json"), 60_000);
    await waitGone(d.supervisorPid, 30_000);
    expect(record.status, JSON.stringify(record)).toBe("ok");
    const torn = receipt(d.dir, tornId);
    expect(torn?.state).toBe("failed");
    expect(torn?.history.at(-1)?.why).toMatch(/not a message/);
    expect(receipt(d.dir, good)?.state).toBe("acted");
    expect(seen(s).map((m) => m.text)).toEqual(["[tool:4000] work", "the good one"]);
    expect(String(record.reply)).toContain("the good one");
    expect((record.steering as { messages: Record<string, number> } | undefined)?.messages).toMatchObject({
      failed: 1,
      acted: 1,
    });
    t.pass();
  });
});
