import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { reapCgroups, reapDispatch } from "./processes.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const FAKE_AGENT = path.join(ROOT, "test/fixtures/fake-agent.mjs");
export const SUPERVISOR_MAIN = path.join(ROOT, "dist/bin/supervisor.js");
export const CLI_MAIN = path.join(ROOT, "dist/bin/catherd.js");

const tempDirs = new Set<string>();

/**
 * A fresh temp folder. Every one is removed once its test file has run (`removeTempDirs`, called by
 * test/helpers/temp-cleanup.ts, a setup file of each vitest config).
 */
export function tempDir(prefix = "catherd-test-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/**
 * Removes every folder `tempDir` made so far. A supervisor that a failed test left writing may still be
 * adding files: the removal retries, and throws if the folder still cannot go.
 */
export function removeTempDirs(): void {
  for (const dir of tempDirs) {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    tempDirs.delete(dir);
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
