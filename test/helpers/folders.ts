import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describeCarriers, processesCarrying } from "./outliving.js";
import { killPid, reapCgroups, reapDispatch } from "./processes.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const FAKE_AGENT = path.join(ROOT, "test/fixtures/fake-agent.mjs");
export const SUPERVISOR_MAIN = path.join(ROOT, "dist/bin/supervisor.js");
export const CLI_MAIN = path.join(ROOT, "dist/bin/catherd.js");

/**
 * The temp folders made so far, by scope: those made while a test runs (its body and its beforeEach
 * hooks) are its own and go after it; those made outside any test (beforeAll, the module) go after the
 * file. test/helpers/temp-cleanup.ts, a setup file of every vitest config, opens and settles the scopes.
 */
const fileDirs = new Set<string>();
let testDirs: Set<string> | null = null;

/** A fresh temp folder, removed after its test (or its file) once nothing carries it (`settleTempDirs`). */
export function tempDir(prefix = "catherd-test-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  (testDirs ?? fileDirs).add(dir);
  return dir;
}

/** A test begins: the folders made until `settleTempDirs("test")` are its own. */
export function openTestScope(): void {
  testDirs = new Set();
}

/** How long the processes that carry a test's folders may take to exit after it returned. */
const OUTLIVE_DEADLINE_MS = 30_000;

/**
 * Removes the folders of a test (`"test"`) or of its file (`"file"`), only once every process that carries
 * one of them has exited (test/helpers/outliving.ts) — a promoter, a notifier, a supervisor folding the
 * ledger after its record: what outlives a record, specs/testing.md. One still there after
 * OUTLIVE_DEADLINE_MS is killed (by pid: it carries this test's folder, so the test started it) and the
 * test fails, naming it and what it was doing. A folder that still cannot be removed fails it too.
 */
export async function settleTempDirs(scope: "test" | "file"): Promise<void> {
  const dirs = scope === "test" ? (testDirs ?? new Set<string>()) : fileDirs;
  if (scope === "test") testDirs = null;
  if (dirs.size === 0) return;
  const list = [...dirs];
  dirs.clear();
  const deadline = Date.now() + OUTLIVE_DEADLINE_MS;
  let left = processesCarrying(list);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    left = processesCarrying(list);
  }
  for (const { pid } of left) killPid(pid);
  for (const dir of list) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  if (left.length > 0) {
    throw new Error(
      `${left.length} process(es) still carried the ${scope}'s temp folders ${OUTLIVE_DEADLINE_MS} ms after it ended (killed now):\n${describeCarriers(left)}`,
    );
  }
}

export interface FakeScenario {
  steps: Record<string, unknown>[];
  pidFile?: string;
}

/** Writes a hand-made dispatch folder that runs the fake agent with `scenario`. */
export function fakeAgentFolder(
  scenario: FakeScenario,
  spec: Record<string, unknown> = {},
  parent = tempDir(),
): { dir: string; id: string } {
  const id = `t-${randomBytes(5).toString("hex")}`;
  const dir = path.join(parent, id);
  fs.mkdirSync(dir, { mode: 0o700 });
  fs.writeFileSync(path.join(dir, "scenario.json"), JSON.stringify(scenario));
  fs.writeFileSync(path.join(dir, "brief.md"), "Do the thing.\n");
  fs.writeFileSync(
    path.join(dir, "spec.json"),
    JSON.stringify({
      cmd: process.execPath,
      args: [FAKE_AGENT, path.join(dir, "scenario.json")],
      pollMs: 20,
      killGraceMs: 300,
      ...spec,
    }),
  );
  return { dir, id };
}

/** A running `supervise` process, tracked so that every test can reap it. */
export interface Supervision {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started = new Set<ChildProcess>();

export function startSupervisor(dir: string, env: NodeJS.ProcessEnv = process.env): Supervision {
  const child = spawn(process.execPath, [SUPERVISOR_MAIN, dir], { stdio: ["ignore", "pipe", "pipe"], env });
  started.add(child);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      started.delete(child);
      resolve({ code, signal });
    });
  });
  return { child, done };
}

/** Runs `supervise` to its end, with a deadline. */
export async function supervise(dir: string, timeoutMs = 20_000) {
  const run = startSupervisor(dir);
  const timer = setTimeout(() => run.child.kill("SIGKILL"), timeoutMs);
  const result = await run.done;
  clearTimeout(timer);
  return result;
}

/**
 * Kills every supervisor a test started and every process of the given dispatches, then removes the
 * cgroups they left; returns how many of either a test left behind (none, when it ended cleanly).
 */
export function reapAll(dispatchIds: readonly string[]): number {
  for (const child of started) child.kill("SIGKILL");
  started.clear();
  const processes = dispatchIds.reduce((n, id) => n + reapDispatch(id), 0);
  return processes + dispatchIds.reduce((n, id) => n + reapCgroups(id), 0);
}

export function readJson(file: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
}
