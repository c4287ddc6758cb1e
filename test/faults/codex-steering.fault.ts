import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ROOT, readJson } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";
import { type Dispatched, homeFor, type Trial, trial, useFaultKit, waitGone } from "./kit.js";

// Row 16 for codex: a steerable codex dispatch (over its app-server) whose supervisor is SIGKILLed
// between giving a message and its receipt. codex dedupes nothing, so the adopter must know what codex
// already took: its answer to the supervisor's turn/steer, in the stream's backlog
// (src/backends/codex-steer.ts). The stand-in (test/fixtures/fake-codex-app-server.mjs) logs every
// message its "model" saw to $FAKE_CODEX_LOG: the exactly-once check is made on that log.

useFaultKit();

const FAKE_CODEX = path.join(ROOT, "test/fixtures/fake-codex-app-server.mjs");

interface Steered {
  env: NodeJS.ProcessEnv;
  log: string;
}

function steeredHome(t: Trial, extra: NodeJS.ProcessEnv = {}): Steered {
  const log = path.join(t.dir(), "model.log");
  const { env } = homeFor(t, { CATHERD_CODEX_BIN: FAKE_CODEX, FAKE_CODEX_LOG: log, ...extra });
  return { env, log };
}

async function dispatchSteered(t: Trial, s: Steered, name: string, brief: string): Promise<Dispatched> {
  const args = ["dispatch", "--backend", "codex", "--steerable", "--name", name, "--brief", brief, "--json"];
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

function receiptState(dir: string, id: string): string | null {
  try {
    return (readJson(path.join(dir, "inbox", `${id}.state.json`)) as { state: string }).state;
  } catch {
    return null;
  }
}

/** Kills the paused supervisor; a reader adopts the orphan, which ends with the message seen once. */
async function adoptAndFinish(t: Trial, s: Steered, d: Dispatched, killed: number, id: string) {
  t.pid(killed);
  killPid(killed);
  await waitGone(killed);
  const proc = await waitForJson<{ pid: number }>(path.join(d.dir, "proc.json"));
  t.pid(proc.pid);
  expect(isAlive(proc.pid), "the app-server outlives its supervisor").toBe(true);
  expect(receiptState(d.dir, id), "a receipt written before the kill").toBeNull();
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

describe("row 16, codex: a supervisor killed between giving a message and its receipt", () => {
  it("(pause hook) the adopter sees codex took it and does not give it again: seen once, acted", async () => {
    const t = trial("16a codex: supervisor SIGKILLed between a message's delivery and its receipt");
    const s = steeredHome(t, { CATHERD_TEST_ONLY_PAUSE_AT: "message-written" });
    const d = await dispatchSteered(t, s, "codex-kill", "[tool:4000] work");
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 30_000);
    const sent = await runCli(["send", "codex-kill", "also the docs", "--json"], {
      env: { ...s.env, CATHERD_TEST_ONLY_PAUSE_AT: "" },
      timeoutMs: 60_000,
    });
    expect(sent.code, sent.stderr).toBe(0);
    const id = (JSON.parse(sent.stdout) as { sent: { id: string } }).sent.id;
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
    // codex answered the steer (it has the message) before the kill: the adopter reads that answer.
    await waitFor("codex's answer to the steer", () =>
      fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8").includes('"id":"steer:') ? true : undefined,
    );
    await adoptAndFinish(t, s, d, pid, id);
    t.pass();
  });
});
