import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ROOT, readJson } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";
import { type Dispatched, homeFor, type Trial, trial, useFaultKit, waitGone } from "./kit.js";

// Rows 16a and 16b for gemini: a steerable gemini dispatch (over ACP) whose supervisor is SIGKILLed
// between giving a message and its receipt. gemini takes a message only between turns, so the message
// sent while the brief's command runs is given (its session/prompt and echo request written) at the
// turn's end. gemini dedupes nothing — a prompt given twice is worked on twice — so the adopter must know
// what gemini already read: its answer to the echo request, in the stream's backlog
// (src/backends/gemini-steer.ts). The stand-in (test/fixtures/fake-gemini-acp.mjs) logs every prompt its
// "model" saw to $FAKE_GEMINI_LOG: the exactly-once check is made on that log.

useFaultKit();

const FAKE_GEMINI = path.join(ROOT, "test/fixtures/fake-gemini-acp.mjs");
const BRIEF = "[tool:3000] work";

interface Steered {
  env: NodeJS.ProcessEnv;
  log: string;
  /** The file the brief's command waits for (FAKE_GEMINI_TOOL_UNTIL): written once a message is sent. */
  gate: string;
}

/**
 * A home whose fake gemini runs the brief's command until the test has sent its first message: a send is a
 * process of its own, and under the matrix's load it may take longer than the command's 3 s.
 */
function steeredHome(t: Trial, extra: NodeJS.ProcessEnv = {}): Steered {
  const log = path.join(t.dir(), "model.log");
  const gate = path.join(t.dir(), "sent");
  const fake = { CATHERD_GEMINI_BIN: FAKE_GEMINI, FAKE_GEMINI_LOG: log, FAKE_GEMINI_TOOL_UNTIL: gate };
  const { env } = homeFor(t, { ...fake, ...extra });
  return { env, log, gate };
}

async function dispatchSteered(
  t: Trial,
  s: Steered,
  name: string,
  brief = BRIEF,
  extra: string[] = [],
): Promise<Dispatched> {
  const args = ["dispatch", "--backend", "gemini", "--steerable", "--access", "full", ...extra];
  args.push("--name", name, "--brief", brief, "--json");
  const result = await runCli(args, { env: s.env, timeoutMs: 60_000 });
  expect(result.stderr, "dispatch printed an error").toBe("");
  expect(result.code).toBe(0);
  const d = (JSON.parse(result.stdout) as { dispatched: Dispatched }).dispatched;
  t.dispatch(d.dispatchId);
  t.pid(d.supervisorPid);
  return d;
}

/** Each prompt the model saw, in order: the uuid its request named, and its text. */
function logged(s: Steered): { uuid: string; text: string }[] {
  if (!fs.existsSync(s.log)) return [];
  return fs
    .readFileSync(s.log, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { uuid: string; text: string });
}

function seen(s: Steered): string[] {
  return logged(s).map((m) => m.text);
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

/** `catherd send` of one text: its id. The brief's command may end once it is sent, unless `holding`. */
async function sendText(s: Steered, name: string, text: string, holding = false): Promise<string> {
  const sent = await runCli(["send", name, text, "--json"], { env: s.env, timeoutMs: 60_000 });
  expect(sent.code, sent.stderr).toBe(0);
  if (!holding) fs.writeFileSync(s.gate, "");
  return (JSON.parse(sent.stdout) as { sent: { id: string } }).sent.id;
}

function written(dir: string, id: string): boolean {
  const file = path.join(dir, "supervisor.log");
  const log = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
  return log
    .split("\n")
    .some((l) => l.includes('"event":"message-written"') && l.includes(`"message":"${id}"`));
}

/** The brief taken, then a message sent while its command runs: its id. */
async function sendMidTool(s: Steered, name: string): Promise<string> {
  await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 30_000);
  const sent = await runCli(["send", name, "also the docs", "--json"], {
    env: { ...s.env, CATHERD_TEST_ONLY_PAUSE_AT: "" },
    timeoutMs: 60_000,
  });
  expect(sent.code, sent.stderr).toBe(0);
  fs.writeFileSync(s.gate, "");
  return (JSON.parse(sent.stdout) as { sent: { id: string } }).sent.id;
}

/** gemini's answer to the message's echo request is in the stream: it read the prompt. */
function echoed(dir: string): Promise<true> {
  return waitFor("gemini's answer to the echo request", () => {
    const events = fs.readFileSync(path.join(dir, "events.jsonl"), "utf8");
    return events.split('"id":"taken:').length - 1 >= 2 ? true : undefined;
  });
}

/** Kills the supervisor; a reader adopts the orphan, which ends with the message seen once. */
async function adoptAndFinish(t: Trial, s: Steered, d: Dispatched, killed: number, id: string) {
  t.pid(killed);
  killPid(killed);
  await waitGone(killed);
  const proc = await waitForJson<{ pid: number }>(path.join(d.dir, "proc.json"));
  t.pid(proc.pid);
  expect(isAlive(proc.pid), "gemini outlives its supervisor").toBe(true);
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
  expect(seen(s), "what the model saw").toEqual([BRIEF, "also the docs"]);
  expect(receiptState(d.dir, id)).toBe("acted");
  expect(record.reply).toBe("done: also the docs");
}

describe("rows 16a, 16b, gemini: a supervisor killed between giving a message and its receipt", () => {
  it("(pause hook) the adopter sees gemini read it and does not give it again: seen once, acted", async () => {
    const t = trial("16a gemini: supervisor SIGKILLed between a message's delivery and its receipt");
    const s = steeredHome(t, { CATHERD_TEST_ONLY_PAUSE_AT: "message-written" });
    const d = await dispatchSteered(t, s, "gemini-kill");
    const id = await sendMidTool(s, "gemini-kill");
    const marker = path.join(d.dir, "test-paused-message-written");
    const pid = await waitFor(
      "the supervisor to pause at message-written (at the brief's turn's end)",
      () => {
        const text = fs.existsSync(marker) ? fs.readFileSync(marker, "utf8") : "";
        return text.endsWith("\n") ? Number(text.trim()) : undefined;
      },
      60_000,
    );
    expect(pid).toBe(d.supervisorPid);
    await echoed(d.dir);
    expect(receiptState(d.dir, id), "a receipt written before the kill").toBeNull();
    await adoptAndFinish(t, s, d, pid, id);
    t.pass();
  });

  it("(no hook: killed at its message-written log line) the same", async () => {
    const t = trial(
      "16b gemini: supervisor SIGKILLed between a message's delivery and its receipt (at its log line)",
    );
    const s = steeredHome(t);
    const d = await dispatchSteered(t, s, "gemini-kill");
    const id = await sendMidTool(s, "gemini-kill");
    await waitFor("the message written to gemini", () => (written(d.dir, id) ? true : undefined), 30_000);
    // gemini answers the echo within milliseconds: the receipt may be written before the kill, or not.
    await adoptAndFinish(t, s, d, d.supervisorPid, id);
    t.pass();
  });
});

/** The lines the stand-in read, in order ({method, id}; FAKE_GEMINI_REQUESTS). */
function read(file: string): { method: string; id?: string }[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { method: string; id?: string });
}

// Row 16i: the kill lands after the message's prompt and echo request were written and before gemini
// refused the echo, so that the adopter finds nothing of the message in the backlog (specs/steering.md,
// "gemini: what an adopter may conclude"). The stand-in holds its refusal of that echo request — and what
// the prompt's turn says meanwhile, which comes after it — until the adopter wrote its first line; the
// model has the message by then. The adopter must ask first (its probe) and not give it again.
describe("row 16i, gemini: killed after writing a prompt, before gemini refused its echo request", () => {
  it("the adopter probes first and does not give the message again: seen once, acted", async () => {
    const t = trial("16i gemini: supervisor SIGKILLed after writing a prompt, before its echo's answer");
    const hold = path.join(t.dir(), "release");
    const requests = path.join(t.dir(), "requests.log");
    const s = steeredHome(t, {
      CATHERD_TEST_ONLY_PAUSE_AT: "message-written",
      FAKE_GEMINI_HOLD: "also the docs",
      FAKE_GEMINI_HOLD_UNTIL: hold,
      FAKE_GEMINI_REQUESTS: requests,
    });
    const d = await dispatchSteered(t, s, "gemini-held");
    const id = await sendMidTool(s, "gemini-held");
    const marker = path.join(d.dir, "test-paused-message-written");
    const killed = await waitFor(
      "the supervisor to pause at message-written (at the brief's turn's end)",
      () => {
        const text = fs.existsSync(marker) ? fs.readFileSync(marker, "utf8") : "";
        return text.endsWith("\n") ? Number(text.trim()) : undefined;
      },
      60_000,
    );
    await waitFor("the model to have the message", () => (seen(s).length === 2 ? true : undefined));
    const before = read(requests).length;
    const events = () => fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8");
    expect(events().split('"id":"taken:').length - 1, "the message's echo refused before the kill").toBe(1);
    t.pid(killed);
    killPid(killed);
    await waitGone(killed);
    const reader = await runCli(["status", "--json"], {
      env: { ...s.env, CATHERD_TEST_ONLY_PAUSE_AT: "" },
      timeoutMs: 30_000,
    });
    expect(reader.code, reader.stderr).toBe(0);
    const adopter = readJson(path.join(d.dir, "supervisor.json")) as { pid: number; adoptions: number };
    t.pid(adopter.pid);
    expect(adopter.adoptions).toBe(1);
    const first = await waitFor("the adopter's first line", () => read(requests)[before]);
    fs.writeFileSync(hold, "");
    const record = await waitForJson(path.join(d.dir, "record.json"), 60_000);
    await waitGone(adopter.pid, 30_000);
    expect(seen(s), "what the model saw").toEqual([BRIEF, "also the docs"]);
    expect(first, "the adopter's first line").toEqual({ method: "_catherd/echo", id: "probe:1" });
    expect(record.status, JSON.stringify(record)).toBe("ok");
    expect(receiptState(d.dir, id)).toBe("acted");
    expect(record.reply).toBe("done: also the docs");
    t.note(`read after the kill: ${JSON.stringify(read(requests).slice(before))}`);
    t.pass();
  });
});

/** The uuid catherd gives a message (supervisor/steering.ts `uuidOf`), recomputed: the prompt names it. */
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
      sent.push({ id: await sendText(s, name, text, true), text });
    }
  });
  await Promise.all(loops);
  // The brief's command ran while all of them were sent: they wait for its turn's end.
  fs.writeFileSync(s.gate, "");
  return sent;
}

// Row 16c for gemini: gemini takes a message only between turns. Those sent while the brief's command
// runs wait for its turn's end and are then given one prompt each, in id order; with --keep-open, one sent
// while gemini is idle starts a turn of its own.
describe("row 16c, gemini: a hundred messages from ten senders at once", () => {
  it("gives each once, in the order of their ids, one prompt each between turns", async () => {
    const t = trial("16c gemini: 100 messages sent to one dispatch by 10 concurrent senders");
    const s = steeredHome(t);
    const d = await dispatchSteered(t, s, "gemini-crowd", "[tool:3000] start", ["--keep-open", "60s"]);
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 30_000);
    const startedAt = Date.now();
    const sent = await crowdSends(s, "gemini-crowd");
    expect(new Set(sent.map((m) => m.id)).size, "every message its own id").toBe(SENDERS * PER_SENDER);
    await waitFor(
      "every receipt acted",
      () => (sent.every((m) => receiptState(d.dir, m.id) === "acted") ? true : undefined),
      120_000,
    );
    t.note(`${sent.length} sent, all acted ${Date.now() - startedAt} ms after the first send`);
    const cancel = await runCli(["cancel", "gemini-crowd", "--wait"], { env: s.env, timeoutMs: 60_000 });
    expect(cancel.code, cancel.stderr).toBe(0);
    await waitGone(d.supervisorPid, 30_000);
    expect(readJson(path.join(d.dir, "record.json")).status).toBe("cancelled");
    const log = logged(s);
    expect(log[0]?.text).toBe("[tool:3000] start");
    const rest = log.slice(1);
    expect(rest.length, "prompts the model saw (besides the brief)").toBe(sent.length);
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

describe("row 16d, gemini: a torn message file in inbox/", () => {
  it("fails the torn one, saying it is not a message, and gives the good one", async () => {
    const t = trial("16d gemini: a torn inbox/<id>.json beside a good message");
    const s = steeredHome(t);
    const d = await dispatchSteered(t, s, "gemini-torn");
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 30_000);
    const tornId = "20261202T060000000Z-aaaaaa";
    fs.mkdirSync(path.join(d.dir, "inbox"), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(d.dir, "inbox", `${tornId}.json`), '{"schema":1,"id":', { mode: 0o600 });
    const good = await sendText(s, "gemini-torn", "the good one");
    expect(good > tornId, "the good message sorts after the torn one").toBe(true);
    const show = await runCli(["show", "gemini-torn", "--json"], { env: s.env, timeoutMs: 30_000 });
    expect(show.code, show.stderr).toBe(0);
    const record = await waitForJson(path.join(d.dir, "record.json"), 60_000);
    await waitGone(d.supervisorPid, 30_000);
    expect(record.status, JSON.stringify(record)).toBe("ok");
    const torn = receiptOf(d.dir, tornId);
    expect(torn?.state).toBe("failed");
    expect(torn?.history.at(-1)?.why).toMatch(/not a message/);
    expect(receiptState(d.dir, good)).toBe("acted");
    expect(seen(s)).toEqual([BRIEF, "the good one"]);
    expect(record.reply).toBe("done: the good one");
    expect((record.steering as { messages: Record<string, number> } | undefined)?.messages).toMatchObject({
      failed: 1,
      acted: 1,
    });
    t.pass();
  });
});
