import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ROOT, readJson } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";
import { type Dispatched, homeFor, type Trial, waitGone } from "./kit.js";

// Row 16's trials for a steerable codex (over its app-server), shared by codex-steering.fault.ts and
// codex-adopter.fault.ts. The stand-in (test/fixtures/fake-codex-app-server.mjs) dedupes nothing, as codex
// does not, and logs every message its "model" saw to $FAKE_CODEX_LOG and every line it read to
// $FAKE_CODEX_REQUESTS: the exactly-once checks are made on those logs, not on catherd's word.

const FAKE_CODEX = path.join(ROOT, "test/fixtures/fake-codex-app-server.mjs");

export interface Steered {
  env: NodeJS.ProcessEnv;
  /** FAKE_CODEX_LOG: what the "model" saw. */
  log: string;
  /** FAKE_CODEX_REQUESTS: what the app-server read, in order. */
  requests: string;
}

export function steeredHome(t: Trial, extra: NodeJS.ProcessEnv = {}): Steered {
  const log = path.join(t.dir(), "model.log");
  const requests = path.join(t.dir(), "requests.log");
  const vars = { CATHERD_CODEX_BIN: FAKE_CODEX, FAKE_CODEX_LOG: log, FAKE_CODEX_REQUESTS: requests };
  const { env } = homeFor(t, { ...vars, ...extra });
  return { env, log, requests };
}

/** `catherd dispatch --backend codex --steerable` of the stand-in, tracked by the trial. */
export async function dispatchSteered(
  t: Trial,
  s: Steered,
  name: string,
  brief: string,
  extra: string[] = [],
): Promise<Dispatched> {
  const args = ["dispatch", "--backend", "codex", "--steerable", "--name", name, "--brief", brief];
  const result = await runCli([...args, "--json", ...extra], { env: s.env, timeoutMs: 60_000 });
  expect(result.stderr, "dispatch printed an error").toBe("");
  expect(result.code).toBe(0);
  const d = (JSON.parse(result.stdout) as { dispatched: Dispatched }).dispatched;
  t.dispatch(d.dispatchId);
  t.pid(d.supervisorPid);
  return d;
}

/** `catherd send NAME TEXT`: the message's id. */
export async function send(s: Steered, name: string, text: string, env = s.env): Promise<string> {
  const result = await runCli(["send", name, text, "--json"], { env, timeoutMs: 60_000 });
  if (result.code !== 0) throw new Error(`send ${text} failed (${result.code}): ${result.stderr}`);
  return (JSON.parse(result.stdout) as { sent: { id: string } }).sent.id;
}

function jsonLines<T>(file: string): T[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as T);
}

/** What the "model" saw, in order. */
export const seen = (s: Steered) => jsonLines<{ uuid: string | null; text: string }>(s.log);
/** What the app-server read, in order. */
export const requests = (s: Steered) => jsonLines<{ method: string; id: string | number | null }>(s.requests);

export function receipt(
  dir: string,
  id: string,
): { state: string; history: { state: string; why?: string }[] } | null {
  try {
    return readJson(path.join(dir, "inbox", `${id}.state.json`)) as {
      state: string;
      history: { state: string; why?: string }[];
    };
  } catch {
    return null;
  }
}

/** supervisor.log's lines of one event. */
export function logLines(dir: string, event: string): Record<string, unknown>[] {
  const file = path.join(dir, "supervisor.log");
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.includes(`"event":"${event}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The pid of the supervisor paused at CATHERD_TEST_ONLY_PAUSE_AT=`point`. */
export function pausedAt(dir: string, point: string): Promise<number> {
  const marker = path.join(dir, `test-paused-${point}`);
  return waitFor(
    `the supervisor to pause at ${point}`,
    () => {
      const text = fs.existsSync(marker) ? fs.readFileSync(marker, "utf8") : "";
      return text.endsWith("\n") ? Number(text.trim()) : undefined;
    },
    60_000,
  );
}

/**
 * Kills the supervisor and has a reader adopt the orphan (the app-server outlives its supervisor): the
 * adopter's pid, tracked by the trial.
 */
export async function killAndAdopt(t: Trial, s: Steered, d: Dispatched, killed: number): Promise<number> {
  t.pid(killed);
  killPid(killed);
  await waitGone(killed);
  const proc = await waitForJson<{ pid: number }>(path.join(d.dir, "proc.json"));
  t.pid(proc.pid);
  expect(isAlive(proc.pid), "the app-server outlives its supervisor").toBe(true);
  const reader = await runCli(["status", "--json"], {
    env: { ...s.env, CATHERD_TEST_ONLY_PAUSE_AT: "" },
    timeoutMs: 30_000,
  });
  expect(reader.code, reader.stderr).toBe(0);
  const adopter = readJson(path.join(d.dir, "supervisor.json")) as { pid: number; adoptions: number };
  t.pid(adopter.pid);
  expect(adopter.pid).not.toBe(killed);
  expect(adopter.adoptions).toBe(1);
  return adopter.pid;
}

/** The adopter supervises the dispatch to its record, `ok`; the record. */
export async function recordedOk(d: Dispatched, adopter: number): Promise<Record<string, unknown>> {
  const record = await waitForJson(path.join(d.dir, "record.json"), 60_000);
  await waitGone(adopter, 30_000);
  expect(record.status, JSON.stringify(record)).toBe("ok");
  expect(readJson(path.join(d.dir, "exit.json")).adoptions).toBe(1);
  expect(logLines(d.dir, "adopted").length).toBe(1);
  return record;
}

/** Resolves once the app-server has read a line that `after` lines of its log came before. */
export function readMore(s: Steered, after: number, what: string): Promise<true> {
  return waitFor(
    `the app-server to read ${what}`,
    () => (requests(s).length > after ? true : undefined),
    60_000,
  );
}
