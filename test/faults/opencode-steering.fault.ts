import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ROOT, readJson } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";
import { type Dispatched, homeFor, type Trial, trial, useFaultKit, waitGone } from "./kit.js";

// Rows 16a and 16b for opencode: a steerable opencode dispatch (catherd's bridge running `opencode serve`)
// whose supervisor is SIGKILLed between giving a message and its receipt. opencode dedupes nothing: the
// adopter must know what opencode already has — the bridge's answer to the prompt, in the stream's
// backlog (src/backends/opencode-steer.ts) — and the bridge, which outlives the supervisor, gives a message
// once however often it is written. The stand-in (test/fixtures/fake-opencode-serve.mjs) logs every
// prompt its "model" took to $FAKE_OPENCODE_LOG: the exactly-once check is made on that log.

useFaultKit();

const FAKE_OPENCODE = path.join(ROOT, "test/fixtures/fake-opencode-serve.mjs");

interface Steered {
  env: NodeJS.ProcessEnv;
  log: string;
}

function steeredHome(t: Trial, extra: NodeJS.ProcessEnv = {}): Steered {
  const log = path.join(t.dir(), "model.log");
  const fake = { CATHERD_OPENCODE_BIN: FAKE_OPENCODE, FAKE_OPENCODE_LOG: log, XDG_DATA_HOME: t.dir() };
  const { env } = homeFor(t, { ...fake, ...extra });
  return { env, log };
}

async function dispatchSteered(
  t: Trial,
  s: Steered,
  name: string,
  brief: string,
  extra: string[] = [],
): Promise<Dispatched> {
  const args = [
    "dispatch",
    "--backend",
    "opencode",
    "--steerable",
    ...extra,
    "--name",
    name,
    "--brief",
    brief,
    "--json",
  ];
  const result = await runCli(args, { env: s.env, timeoutMs: 60_000 });
  expect(result.stderr, "dispatch printed an error").toBe("");
  expect(result.code).toBe(0);
  const d = (JSON.parse(result.stdout) as { dispatched: Dispatched }).dispatched;
  t.dispatch(d.dispatchId);
  t.pid(d.supervisorPid);
  return d;
}

function seen(s: Steered): string[] {
  if (!fs.existsSync(s.log)) return [];
  return fs
    .readFileSync(s.log, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as { text: string }).text);
}

interface Receipt {
  state: string;
  history: { state: string; why?: string }[];
}

function receiptOf(dir: string, id: string): Receipt | null {
  try {
    return readJson(path.join(dir, "inbox", `${id}.state.json`)) as unknown as Receipt;
  } catch {
    return null;
  }
}

function receiptState(dir: string, id: string): string | null {
  return receiptOf(dir, id)?.state ?? null;
}

/** `catherd send` of one text: its id. */
async function sendText(s: Steered, name: string, text: string): Promise<string> {
  const sent = await runCli(["send", name, text, "--json"], { env: s.env, timeoutMs: 60_000 });
  expect(sent.code, sent.stderr).toBe(0);
  return (JSON.parse(sent.stdout) as { sent: { id: string } }).sent.id;
}

function messageWritten(dir: string, id: string): boolean {
  const file = path.join(dir, "supervisor.log");
  if (!fs.existsSync(file)) return false;
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .some((l) => l.includes('"event":"message-written"') && l.includes(`"message":"${id}"`));
}

async function sendOne(s: Steered): Promise<string> {
  const sent = await runCli(["send", "opencode-kill", "also the docs", "--json"], {
    env: { ...s.env, CATHERD_TEST_ONLY_PAUSE_AT: "" },
    timeoutMs: 60_000,
  });
  expect(sent.code, sent.stderr).toBe(0);
  return (JSON.parse(sent.stdout) as { sent: { id: string } }).sent.id;
}

/** Kills the supervisor; a reader adopts the orphan, which ends with the message seen once. */
async function adoptAndFinish(t: Trial, s: Steered, d: Dispatched, killed: number, id: string) {
  t.pid(killed);
  killPid(killed);
  await waitGone(killed);
  const proc = await waitForJson<{ pid: number }>(path.join(d.dir, "proc.json"));
  t.pid(proc.pid);
  expect(isAlive(proc.pid), "the bridge outlives its supervisor").toBe(true);
  const reader = await runCli(["status", "--json"], {
    env: { ...s.env, CATHERD_TEST_ONLY_PAUSE_AT: "" },
    timeoutMs: 30_000,
  });
  expect(reader.code, reader.stderr).toBe(0);
  const adopter = readJson(path.join(d.dir, "supervisor.json")) as { pid: number; adoptions: number };
  t.pid(adopter.pid);
  expect(adopter.adoptions).toBe(1);
  const record = await waitForJson(path.join(d.dir, "record.json"), 60_000);
  await waitGone(adopter.pid, 30_000);
  expect(record.status, JSON.stringify(record)).toBe("ok");
  expect(seen(s), "what the model saw").toEqual(["[tool:4000] work", "also the docs"]);
  expect(receiptState(d.dir, id)).toBe("acted");
}

describe("rows 16a, 16b, opencode: a supervisor killed between giving a message and its receipt", () => {
  it("(pause hook) the adopter sees opencode has it and does not give it again: seen once, acted", async () => {
    const t = trial("16a opencode: supervisor SIGKILLed between a message's delivery and its receipt");
    const s = steeredHome(t, { CATHERD_TEST_ONLY_PAUSE_AT: "message-written" });
    const d = await dispatchSteered(t, s, "opencode-kill", "[tool:4000] work");
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 30_000);
    const id = await sendOne(s);
    const marker = path.join(d.dir, "test-paused-message-written");
    const pid = await waitFor(
      "the supervisor to pause at message-written",
      () => {
        const text = fs.existsSync(marker) ? fs.readFileSync(marker, "utf8") : "";
        return text.endsWith("\n") ? Number(text.trim()) : undefined;
      },
      60_000,
    );
    expect(pid).toBe(d.supervisorPid);
    expect(receiptState(d.dir, id), "a receipt written before the kill").toBeNull();
    // opencode has the prompt (the bridge's answer) before the kill: the adopter reads that answer.
    await waitFor("opencode's answer to the prompt", () =>
      fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8").split('"id":"prompt:').length > 2
        ? true
        : undefined,
    );
    await adoptAndFinish(t, s, d, pid, id);
    t.pass();
  });

  it("(no hook: killed at its message-written log line, while the tool runs) the same", async () => {
    const t = trial(
      "16b opencode: supervisor SIGKILLed between a message's delivery and its receipt (at its log line)",
    );
    const s = steeredHome(t);
    const d = await dispatchSteered(t, s, "opencode-kill", "[tool:4000] work");
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 30_000);
    const id = await sendOne(s);
    await waitFor(
      "the message written to the channel",
      () => (messageWritten(d.dir, id) ? true : undefined),
      30_000,
    );
    await adoptAndFinish(t, s, d, d.supervisorPid, id);
    t.pass();
  });
});

const SENDERS = 10;
const PER_SENDER = 10;

/** SENDERS loops of PER_SENDER `catherd send` each, at once: each message's id and text. */
async function crowdSends(s: Steered, name: string): Promise<{ id: string; text: string }[]> {
  const sent: { id: string; text: string }[] = [];
  const loops = Array.from({ length: SENDERS }, async (_, p) => {
    for (let i = 0; i < PER_SENDER; i++) {
      const text = `sender ${p} message ${i}`;
      sent.push({ id: await sendText(s, name, text), text });
    }
  });
  await Promise.all(loops);
  return sent;
}

// Row 16c for opencode: opencode takes a message mid-turn (it joins the running turn), or, with
// --keep-open, one given while it is idle starts a turn.
describe("row 16c, opencode: a hundred messages from ten senders at once", () => {
  it("gives each once, in the order of their ids, mid-turn or starting the next turn", async () => {
    const t = trial("16c opencode: 100 messages sent to one dispatch by 10 concurrent senders");
    const s = steeredHome(t);
    const d = await dispatchSteered(t, s, "opencode-crowd", "[tool:3000] start", ["--keep-open", "60s"]);
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 30_000);
    const startedAt = Date.now();
    const sent = await crowdSends(s, "opencode-crowd");
    expect(new Set(sent.map((m) => m.id)).size, "every message its own id").toBe(SENDERS * PER_SENDER);
    await waitFor(
      "every receipt acted",
      () => (sent.every((m) => receiptState(d.dir, m.id) === "acted") ? true : undefined),
      120_000,
    );
    t.note(`${sent.length} sent, all acted ${Date.now() - startedAt} ms after the first send`);
    const cancel = await runCli(["cancel", "opencode-crowd", "--wait"], { env: s.env, timeoutMs: 60_000 });
    expect(cancel.code, cancel.stderr).toBe(0);
    await waitGone(d.supervisorPid, 30_000);
    expect(readJson(path.join(d.dir, "record.json")).status).toBe("cancelled");
    const log = seen(s);
    expect(log[0]).toBe("[tool:3000] start");
    const rest = log.slice(1);
    expect(rest.length, "prompts the model took (besides the brief)").toBe(sent.length);
    const byText = new Map(sent.map((m) => [m.text, m.id]));
    const seenIds = rest.map((text) => byText.get(text) as string);
    expect(new Set(seenIds).size, "each taken once").toBe(sent.length);
    expect(seenIds, "the order the model took the messages in, against their ids").toEqual(
      [...seenIds].sort(),
    );
    t.pass();
  });
});

describe("row 16d, opencode: a torn message file in inbox/", () => {
  it("fails the torn one, saying it is not a message, and gives the good one", async () => {
    const t = trial("16d opencode: a torn inbox/<id>.json beside a good message");
    const s = steeredHome(t);
    const d = await dispatchSteered(t, s, "opencode-torn", "[tool:4000] work");
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 30_000);
    const tornId = "20261202T060000000Z-aaaaaa";
    fs.mkdirSync(path.join(d.dir, "inbox"), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(d.dir, "inbox", `${tornId}.json`), '{"schema":1,"id":', { mode: 0o600 });
    const good = await sendText(s, "opencode-torn", "the good one");
    expect(good > tornId, "the good message sorts after the torn one").toBe(true);
    const show = await runCli(["show", "opencode-torn", "--json"], { env: s.env, timeoutMs: 30_000 });
    expect(show.code, show.stderr).toBe(0);
    const record = await waitForJson(path.join(d.dir, "record.json"), 60_000);
    await waitGone(d.supervisorPid, 30_000);
    expect(record.status, JSON.stringify(record)).toBe("ok");
    const torn = receiptOf(d.dir, tornId);
    expect(torn?.state).toBe("failed");
    expect(torn?.history.at(-1)?.why).toMatch(/not a message/);
    expect(receiptState(d.dir, good)).toBe("acted");
    expect(seen(s)).toEqual(["[tool:4000] work", "the good one"]);
    expect(String(record.reply)).toContain("the good one");
    expect((record.steering as { messages: Record<string, number> } | undefined)?.messages).toMatchObject({
      failed: 1,
      acted: 1,
    });
    t.pass();
  });
});
