import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, isolatedHome, runCli } from "../helpers/cli.js";
import { recordedLines } from "../helpers/fake-cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { isolateGitConfig, makeRepo } from "../helpers/git.js";
import { killPid } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait.js";

// A follow-up as its run sees it (specs/dispatch.md, "Following up"): `catherd clean` takes a
// conversation's worktree only with its newest turn, never while a follow-up works in it; the run's
// budget counts the conversation's turns as any dispatches. The same fake codex as follow-up.test.ts.

const dispatched: string[] = [];
const leftovers: number[] = [];

beforeAll(() => isolateGitConfig());

afterEach(() => {
  for (const pid of leftovers.splice(0)) killPid(pid);
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

const THREAD = "01a2264d-a96b-7c23-b4e9-0484292c91b3";

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
function _startSleeper(cwd: string): number {
  const child = spawn("/bin/sh", ["-c", "exec sleep 1000"], {
    detached: true,
    stdio: "ignore",
    env: {},
    cwd,
  });
  child.unref();
  return child.pid as number;
}

function _firstOf<T>(list: T[]): T {
  expect(list.length).toBeGreaterThan(0);
  return list[0] as T;
}

function _calls(dir: string): { argv: string[]; cwd: string }[] {
  const file = path.join(dir, "codex.calls");
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { argv: string[]; cwd: string });
}

function json<T>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${result.code}): ${result.stdout}${result.stderr}`);
  }
}

type Dispatched = { dispatched: { dispatchId: string; dir: string; name: string } };

async function dispatch(env: NodeJS.ProcessEnv, args: string[]): Promise<Dispatched["dispatched"]> {
  const result = await runCli(["dispatch", "--json", ...args], { env });
  expect(result.code, result.stdout + result.stderr).toBe(0);
  const d = json<Dispatched>(result).dispatched;
  dispatched.push(d.dispatchId);
  return d;
}

async function waitRecorded(env: NodeJS.ProcessEnv, name: string): Promise<Record<string, unknown>> {
  const waited = await runCli(["wait", name, "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
  expect(waited.code, waited.stdout + waited.stderr).toBe(0);
  return json<{ records: Record<string, unknown>[] }>(waited).records[0] as Record<string, unknown>;
}

function setUp(options: { leftover?: boolean } = {}) {
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

describe("catherd clean and a conversation's worktree", () => {
  it("removes an earlier turn's folder without the worktree a live follow-up works in, and the worktree with the newest turn", async () => {
    const { bins, env } = setUp();
    const repo = makeRepo(tempDir(), { "a.txt": "one\n" });
    const first = await dispatch(env, [
      "--backend",
      "codex",
      "--name",
      "talk",
      "--cwd",
      repo,
      "--worktree",
      "--brief",
      "q",
    ]);
    await waitRecorded(env, "talk");
    const worktree = JSON.parse(fs.readFileSync(path.join(first.dir, "spec.json"), "utf8")).worktree
      .path as string;
    const hold = path.join(bins, "go");
    const second = await dispatch({ ...env, HOLD_UNTIL: hold }, ["--follow-up", "talk", "--brief", "more"]);
    await waitFor("the follow-up to run", () =>
      fs.existsSync(path.join(second.dir, "proc.json")) ? true : undefined,
    );

    const during = json<{ clean: { removed: { dispatchId: string; worktree: unknown }[] } }>(
      await runCli(["clean", "--older-than", "0", "--json"], { env }),
    ).clean;
    expect(during.removed.map((r) => [r.dispatchId, r.worktree])).toEqual([[first.dispatchId, null]]);
    expect(fs.existsSync(first.dir)).toBe(false);
    expect(fs.existsSync(path.join(worktree, "a.txt"))).toBe(true);

    fs.writeFileSync(hold, "");
    await waitRecorded(env, "talk");
    const after = json<{ clean: { removed: { dispatchId: string; worktree: { path: string } | null }[] } }>(
      await runCli(["clean", "--older-than", "0", "--json"], { env }),
    ).clean;
    expect(after.removed.map((r) => [r.dispatchId, r.worktree?.path])).toEqual([
      [second.dispatchId, worktree],
    ]);
    expect(fs.existsSync(worktree)).toBe(false);
  }, 120_000);
});

describe("a follow-up and its run's budget", () => {
  it("is refused with E_RUN_BUDGET, nothing written, once the first turn spent the run's budget", async () => {
    const { home, env } = setUp();
    // The recorded codex run bills 10,091 tokens: over the budget of 5,000 once it is recorded.
    await dispatch(env, [
      "--backend",
      "codex",
      "--name",
      "talk",
      "--run-budget",
      "tokens=5000",
      "--brief",
      "q",
    ]);
    const first = await waitRecordedAny(env, "talk");
    expect(first.thread).toBe(THREAD);
    const before = treeOf(home);
    const refused = await runCli(["dispatch", "--follow-up", "talk", "--brief", "more", "--json"], { env });
    const error = json<{ error: { code: string; message: string } }>(refused).error;
    expect(error.code, error.message).toBe("E_RUN_BUDGET");
    expect(treeOf(home)).toEqual(before);
  }, 120_000);
});

/** The record `wait` returns, whatever its status (a turn stopped by the run's budget is not ok). */
async function waitRecordedAny(env: NodeJS.ProcessEnv, name: string): Promise<Record<string, unknown>> {
  const waited = await runCli(["wait", name, "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
  return json<{ records: Record<string, unknown>[] }>(waited).records[0] as Record<string, unknown>;
}

/** Every path under `dir` with its size and mtime: what a refusal must leave as it found it. */
function treeOf(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      const stat = fs.lstatSync(p);
      out.push(`${path.relative(dir, p)} ${stat.isDirectory() ? "dir" : `${stat.size} ${stat.mtimeMs}`}`);
      if (entry.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}
