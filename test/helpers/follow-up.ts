import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "vitest";
import { COMPILE_CACHE_DIR } from "../../src/infra/compile-cache.js";
import { isolatedHome, json, runCli } from "./cli.js";
import { recordedLines } from "./fake-cli.js";
import { tempDir } from "./folders.js";

// The follow-up tests' kit (test/dispatch/follow-up*.test.ts): a fake codex that plays the recorded codex
// run, a home to dispatch it in, and the CLI calls they make. `dispatched` collects every dispatch id for
// the test file's reap.

export const THREAD = "01a2264d-a96b-7c23-b4e9-0484292c91b3";

/**
 * A fake codex: prints the recorded codex text run (thread THREAD), appends its argv to `codex.calls`;
 * with LEFTOVER_PIDFILE set, its first run leaves a sleeping process in its cwd with an empty
 * environment in a session of its own, and writes that pid to the file. With HOLD_UNTIL, it prints
 * nothing until that file exists; with FAKE_NO_THREAD=1, it never names its thread.
 */
function fakeCodex(dir: string): string {
  const script = path.join(dir, "codex");
  const lines = JSON.stringify(recordedLines("codex", "text"));
  const calls = JSON.stringify(path.join(dir, "codex.calls"));
  fs.writeFileSync(
    script,
    `#!${process.execPath}
const fs = require("node:fs");
const { spawn } = require("node:child_process");
if (process.argv[2] === "--version") { console.log("codex-cli 99.0.0"); process.exit(0); }
fs.appendFileSync(${calls}, JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd() }) + "\\n");
const pidFile = process.env.LEFTOVER_PIDFILE;
if (pidFile !== undefined && !fs.existsSync(pidFile)) {
  const child = spawn("/bin/sh", ["-c", "exec sleep 1000"], { detached: true, stdio: "ignore", env: {}, cwd: process.cwd() });
  child.unref();
  fs.writeFileSync(pidFile, String(child.pid));
}
const hold = process.env.HOLD_UNTIL;
const finish = () => {
  for (const line of ${lines}) {
    if (process.env.FAKE_NO_THREAD === "1" && line.includes("thread.started")) continue;
    fs.writeSync(1, line + "\\n");
  }
};
if (hold === undefined) finish();
else { const look = () => (fs.existsSync(hold) ? finish() : setTimeout(look, 20)); look(); }
`,
    { mode: 0o755 },
  );
  return script;
}

/** A sleeping process in `cwd` with an empty environment, as a user's shell there would be (its pid). */
export function startSleeper(cwd: string): number {
  const child = spawn("/bin/sh", ["-c", "exec sleep 1000"], {
    detached: true,
    stdio: "ignore",
    env: {},
    cwd,
  });
  child.unref();
  return child.pid as number;
}

export function firstOf<T>(list: T[]): T {
  expect(list.length).toBeGreaterThan(0);
  return list[0] as T;
}

export function calls(dir: string): { argv: string[]; cwd: string }[] {
  const file = path.join(dir, "codex.calls");
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { argv: string[]; cwd: string });
}

export type Dispatched = { dispatched: { dispatchId: string; dir: string; name: string } };

/** `catherd dispatch --json …`, expected to succeed; its id joins `dispatched`. */
export async function dispatch(
  dispatched: string[],
  env: NodeJS.ProcessEnv,
  args: string[],
): Promise<Dispatched["dispatched"]> {
  const result = await runCli(["dispatch", "--json", ...args], { env });
  expect(result.code, result.stdout + result.stderr).toBe(0);
  const d = json<Dispatched>(result).dispatched;
  dispatched.push(d.dispatchId);
  return d;
}

/** `catherd wait NAME`, expected ok: its record. */
export async function waitRecorded(env: NodeJS.ProcessEnv, name: string): Promise<Record<string, unknown>> {
  const waited = await runCli(["wait", name, "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
  expect(waited.code, waited.stdout + waited.stderr).toBe(0);
  return json<{ records: Record<string, unknown>[] }>(waited).records[0] as Record<string, unknown>;
}

export function setUp(options: { leftover?: boolean } = {}) {
  const { home, env: base } = isolatedHome();
  const bins = tempDir();
  const codex = fakeCodex(bins);
  const pidFile = path.join(bins, "leftover.pid");
  const env: NodeJS.ProcessEnv = {
    ...base,
    CATHERD_CODEX_BIN: codex,
    CATHERD_TEST_ONLY_NO_CGROUP: "1",
    ...(options.leftover === true ? { LEFTOVER_PIDFILE: pidFile } : {}),
  };
  return { home, bins, env, pidFile };
}

/**
 * Every path under `dir` with its size and mtime: what a refusal must leave as it found it. Node's
 * compile cache is left out: any catherd process (an earlier turn's supervisor exiting, too) may
 * flush it at any moment, renaming its temporary files, and it holds no state of catherd's.
 */
export function treeOf(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      if (entry.name === COMPILE_CACHE_DIR && d === dir) continue;
      const p = path.join(d, entry.name);
      const stat = fs.lstatSync(p);
      out.push(`${path.relative(dir, p)} ${stat.isDirectory() ? "dir" : `${stat.size} ${stat.mtimeMs}`}`);
      if (entry.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}
