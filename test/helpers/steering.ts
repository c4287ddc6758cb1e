import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, expect } from "vitest";
import type { Dispatched } from "../../src/cli/dispatch-command.js";
import type { Sent } from "../../src/cli/send-command.js";
import { findByDispatchVariable } from "../../src/infra/sweep.js";
import { isolatedHome, runCli } from "./cli.js";
import { ROOT, readJson, reapAll, tempDir } from "./folders.js";
import { isAlive, reapDispatch } from "./processes.js";
import { waitFor } from "./wait.js";

// The steering tests' stand-in CLIs and their clean-up (specs/steering.md): a dispatch of the fake that
// speaks Claude Code's stream-json protocol, and an afterEach that waits for every supervisor to end by
// itself, then fails the test on anything of a dispatch (or its notifier) left running; for the other
// CLIs' stand-ins (codex's app-server, gemini's ACP, opencode's server), a home, a dispatch, a send, and
// what the folder and the stand-in's "model" say.

export const FAKE_CLAUDE = path.join(ROOT, "test/fixtures/fake-claude-stream.mjs");

export interface SteeredDispatches {
  /** Dispatches `claude-code` on the fake with `--json`; refuses a dispatch that did not start. */
  dispatch(
    env: NodeJS.ProcessEnv,
    name: string,
    brief: string,
    extra?: string[],
  ): Promise<Dispatched["dispatched"]>;
  /** A dispatch to reap too (one the test dispatched itself, a follow-up, a chain's next attempt), and its supervisor to wait for. */
  track(dispatchId: string, supervisorPid?: number | null): void;
}

export function useSteeredDispatches(): SteeredDispatches {
  const dispatched: string[] = [];
  const supervisors: number[] = [];
  afterEach(async () => {
    await waitFor("the supervisors to exit", () =>
      supervisors.every((pid) => !isAlive(pid)) ? true : undefined,
    ).finally(() => supervisors.splice(0));
    const ids = dispatched.splice(0);
    // A notifier outlives the last line it logs by a moment: waited for, not killed.
    await waitFor("the notifiers to exit", () =>
      ids.every((id) => findByDispatchVariable(`${id}.notify`).length === 0) ? true : undefined,
    ).catch(() => undefined);
    const notifiers = ids.reduce((n, id) => n + reapDispatch(`${id}.notify`), 0);
    expect(reapAll(ids) + notifiers, "processes left running").toBe(0);
  });
  return {
    async dispatch(env, name, brief, extra = []) {
      const result = await runCli(
        ["dispatch", "--backend", "claude-code", "--name", name, "--brief", brief, "--json", ...extra],
        { env: { CATHERD_CLAUDE_BIN: FAKE_CLAUDE, ...env } },
      );
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const d = (JSON.parse(result.stdout) as Dispatched).dispatched;
      dispatched.push(d.dispatchId);
      if (d.supervisorPid !== null) supervisors.push(d.supervisorPid);
      return d;
    },
    track(dispatchId, supervisorPid = null) {
      dispatched.push(dispatchId);
      if (supervisorPid !== null) supervisors.push(supervisorPid);
    },
  };
}

/**
 * A home for steerable dispatches of one stand-in CLI: `env` points the backend's variable at the fake
 * and names the log where its "model" writes what it saw ({uuid, text} per line, in order).
 */
export interface StandIn {
  backend: string;
  env: NodeJS.ProcessEnv;
  log: string;
}

export function standIn(
  backend: string,
  fake: { binEnv: string; file: string; logEnv: string },
  extra: NodeJS.ProcessEnv = {},
): StandIn {
  const { env } = isolatedHome();
  const log = path.join(tempDir(), "model.log");
  const bin = path.join(ROOT, "test/fixtures", fake.file);
  return { backend, env: { ...env, [fake.binEnv]: bin, [fake.logEnv]: log, ...extra }, log };
}

/** Dispatches the stand-in's backend with `--json`, tracked by `steered`; refuses a dispatch that did not start. */
export async function dispatchStandIn(
  steered: SteeredDispatches,
  s: StandIn,
  run: { name: string; brief: string; extra?: string[] },
): Promise<Dispatched["dispatched"]> {
  const args = ["dispatch", "--backend", s.backend, "--name", run.name, "--brief", run.brief, "--json"];
  const result = await runCli([...args, ...(run.extra ?? [])], { env: s.env });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const d = (JSON.parse(result.stdout) as Dispatched).dispatched;
  steered.track(d.dispatchId, d.supervisorPid);
  return d;
}

/** `catherd send … --json`; throws with its stderr when it fails. */
export async function sendMessage(env: NodeJS.ProcessEnv, args: string[]): Promise<Sent["sent"]> {
  const result = await runCli(["send", ...args, "--json"], { env });
  if (result.code !== 0) throw new Error(`send failed (${result.code}): ${result.stderr}`);
  return (JSON.parse(result.stdout) as Sent).sent;
}

/** A dispatch's events.jsonl as it is now ("" before it exists). */
export function eventsOf(dir: string): string {
  const file = path.join(dir, "events.jsonl");
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
}

/** Resolves once the dispatch's events.jsonl holds `text` `times` times. */
export function eventsHold(dir: string, text: string, times = 1): Promise<true> {
  return waitFor(`events.jsonl to hold ${text} ×${times}`, () =>
    eventsOf(dir).split(text).length - 1 >= times ? true : undefined,
  );
}

/** What a stand-in's "model" saw, in order: one entry per message it was given. */
export function modelSaw(log: string): { uuid: string | null; text: string }[] {
  if (!fs.existsSync(log)) return [];
  return fs
    .readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { uuid: string | null; text: string });
}

/** A message's receipt states in order; [] before the supervisor wrote its first. */
export function receiptStates(dir: string, id: string): string[] {
  const file = path.join(dir, "inbox", `${id}.state.json`);
  if (!fs.existsSync(file)) return [];
  return (readJson(file).history as { state: string }[]).map((h) => h.state);
}
