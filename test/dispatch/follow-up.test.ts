import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Turn } from "../../src/dispatch/follow-up/conversation.js";
import { type CliResult, isolatedHome, runCli } from "../helpers/cli.js";
import { recordedLines } from "../helpers/fake-cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { isolateGitConfig, makeRepo } from "../helpers/git.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait.js";

// `dispatch --follow-up NAME` with real processes (specs/dispatch.md, "Following up"): a fake codex that
// plays the recorded codex run (its thread id included) and notes each argv, supervised by real
// supervisors; the first turn leaves a process behind that no end-of-dispatch stop can find (its
// environment cleared, its own session, no cgroup), which the follow-up's supervisor must stop.

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
function startSleeper(cwd: string): number {
  const child = spawn("/bin/sh", ["-c", "exec sleep 1000"], {
    detached: true,
    stdio: "ignore",
    env: {},
    cwd,
  });
  child.unref();
  return child.pid as number;
}

function firstOf<T>(list: T[]): T {
  expect(list.length).toBeGreaterThan(0);
  return list[0] as T;
}

function calls(dir: string): { argv: string[]; cwd: string }[] {
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

describe("dispatch --follow-up, with real processes", () => {
  it("resumes the first turn's thread in its worktree, stops the leftover of that turn first, and lists the conversation", async () => {
    const { bins, env, pidFile } = setUp({ leftover: true });
    const repo = makeRepo(tempDir(), { "a.txt": "one\n" });
    const first = await dispatch(env, [
      "--backend",
      "codex",
      "--name",
      "talk",
      "--cwd",
      repo,
      "--worktree",
      "--access",
      "workspace-write",
      "--model",
      "gpt-test",
      "--brief",
      "first question\nwith a second line",
    ]);
    const firstRecord = await waitRecorded(env, "talk");
    expect(firstRecord).toMatchObject({ status: "ok", thread: THREAD });
    const leftover = Number(fs.readFileSync(pidFile, "utf8"));
    leftovers.push(leftover);
    // The end of the first turn could not find it: no variable, no group, no cgroup.
    expect(isAlive(leftover)).toBe(true);

    // A user's shell opened in the worktree once the turn had ended is not the turn's: it stays.
    const exitWritten = fs.statSync(path.join(first.dir, "exit.json")).mtimeMs;
    await waitFor("the turn's end to be past", () => (Date.now() > exitWritten + 500 ? true : undefined));
    const user = startSleeper(firstOf(calls(bins)).cwd);
    leftovers.push(user);

    const second = await dispatch(env, ["--follow-up", "talk", "--brief", "and then?"]);
    expect(second.name).toBe("talk");
    const secondRecord = await waitRecorded(env, "talk");
    expect(secondRecord).toMatchObject({ dispatchId: second.dispatchId, status: "ok", thread: THREAD });

    // The second turn resumed the first one's thread, on the same model and access, in the same worktree.
    const [one, two] = calls(bins);
    expect(one?.argv.slice(0, 2)).toEqual(["exec", "--json"]);
    expect(two?.argv.slice(0, 3)).toEqual(["exec", "resume", "--json"]);
    expect(two?.argv).toContain(THREAD);
    expect(two?.argv).toEqual(expect.arrayContaining(["-m", "gpt-test", "--sandbox", "workspace-write"]));
    expect(two?.cwd).toBe(one?.cwd);
    const admit = JSON.parse(fs.readFileSync(path.join(second.dir, "admit.json"), "utf8"));
    expect(admit).toMatchObject({
      followUpOf: first.dispatchId,
      access: "workspace-write",
      model: "gpt-test",
    });
    const spec1 = JSON.parse(fs.readFileSync(path.join(first.dir, "spec.json"), "utf8"));
    const spec2 = JSON.parse(fs.readFileSync(path.join(second.dir, "spec.json"), "utf8"));
    expect(spec2.worktree).toEqual(spec1.worktree);

    // The leftover was stopped before the second turn's CLI started, by pid and start time, and named.
    await waitFor("the leftover to be gone", () => (isAlive(leftover) ? undefined : true), 10_000);
    expect(isAlive(user)).toBe(true);
    const log = fs.readFileSync(path.join(second.dir, "supervisor.log"), "utf8");
    const stopped = log
      .split("\n")
      .filter((l) => l.includes('"previous-turn-stopped"'))
      .map((l) => JSON.parse(l));
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatchObject({ of: first.dispatchId, processes: [{ pid: leftover, why: "cwd" }] });
    const spawnedAt = log.split("\n").findIndex((l) => l.includes('"spawned"'));
    const stoppedAt = log.split("\n").findIndex((l) => l.includes('"previous-turn-stopped"'));
    expect(stoppedAt).toBeLessThan(spawnedAt);

    // result --conversation and show list both turns, linked both ways.
    const conversation = json<{ conversation: Turn[] }>(
      await runCli(["result", "--conversation", "talk", "--json"], { env }),
    ).conversation;
    expect(conversation.map((t) => [t.turn, t.dispatchId, t.status, t.brief, t.reply])).toEqual([
      [1, first.dispatchId, "ok", "first question", "Hello from mockllm."],
      [2, second.dispatchId, "ok", "and then?", "Hello from mockllm."],
    ]);
    expect(conversation[0]?.followedUpBy).toBe(second.dispatchId);
    expect(conversation[1]?.followUpOf).toBe(first.dispatchId);
    const text = await runCli(["result", "--conversation", "talk"], { env });
    expect(text.stdout).toContain(`turn 2 ${second.dispatchId} ok`);
    expect(text.stdout).toContain("  brief: and then?");
    const shown = await runCli(["show", first.dispatchId], { env });
    expect(shown.stdout).toContain(
      `conversation: turn 1 of 2 (1:${first.dispatchId} ok → 2:${second.dispatchId} ok)`,
    );
    const shownJson = json<{ dispatch: { conversation: Turn[] } }>(
      await runCli(["show", "talk", "--json"], { env }),
    );
    expect(shownJson.dispatch.conversation.map((t) => t.dispatchId)).toEqual([
      first.dispatchId,
      second.dispatchId,
    ]);

    // usage --by name sums the conversation: both turns, tokens twice the one run's.
    const usage = json<{ groups: { key: string; dispatches: number; output: number }[] }>(
      await runCli(["usage", "--by", "name", "--json"], { env }),
    );
    expect(usage.groups.find((g) => g.key === "talk")).toMatchObject({ dispatches: 2, output: 24 });
  }, 120_000);
});

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

describe("dispatch --follow-up in a shared folder", () => {
  it("leaves a process in a checkout alone: a cwd others share proves nothing", async () => {
    const { env, pidFile } = setUp({ leftover: true });
    const cwd = tempDir();
    await dispatch(env, ["--backend", "codex", "--name", "talk", "--cwd", cwd, "--brief", "q"]);
    await waitRecorded(env, "talk");
    const stray = Number(fs.readFileSync(pidFile, "utf8"));
    leftovers.push(stray);
    const second = await dispatch(env, ["--follow-up", "talk", "--brief", "more"]);
    await waitRecorded(env, "talk");
    expect(isAlive(stray)).toBe(true);
    const log = fs.readFileSync(path.join(second.dir, "supervisor.log"), "utf8");
    expect(log).not.toContain("previous-turn-stopped");
    const admit = JSON.parse(fs.readFileSync(path.join(second.dir, "admit.json"), "utf8"));
    expect(admit.cwd).toBe(cwd);
  }, 120_000);
});

describe("dispatch --follow-up refuses, writing nothing", () => {
  it("refuses each follow-up that cannot continue a thread, with its code and nothing written", async () => {
    const { home, bins, env } = setUp();
    await dispatch(env, ["--backend", "codex", "--name", "talk", "--access", "read-only", "--brief", "q"]);
    await waitRecorded(env, "talk");
    await dispatch({ ...env, FAKE_NO_THREAD: "1" }, ["--backend", "codex", "--name", "mute", "--brief", "q"]);
    await waitRecorded(env, "mute");
    await dispatch(env, ["--backend", "exec", "--name", "shell", "--", "true"]);
    await waitRecorded(env, "shell");
    const hold = path.join(bins, "go");
    const busy = await dispatch({ ...env, HOLD_UNTIL: hold }, [
      "--backend",
      "codex",
      "--name",
      "busy",
      "--brief",
      "q",
    ]);
    await waitFor("busy to run", () => (fs.existsSync(path.join(busy.dir, "proc.json")) ? true : undefined));
    // The live dispatch's own supervisor writes in its folder meanwhile; nothing else may change.
    const busyFiles = `${path.relative(home, busy.dir)}/`;
    const tree = () => treeOf(home).filter((line) => !line.startsWith(busyFiles));

    const cases: [string[], string, RegExp][] = [
      [["--follow-up", "nobody"], "E_DISPATCH_NOT_FOUND", /run default has no dispatch named nobody/],
      [
        ["--follow-up", "busy"],
        "E_ADMIT_DUPLICATE",
        /still (starting|running).*live steering does not exist yet/,
      ],
      [["--follow-up", "shell"], "E_INPUT_INVALID", /--backend exec has no thread to continue/],
      [["--follow-up", "mute"], "E_INPUT_INVALID", /its CLI never named its thread/],
      [
        ["--follow-up", "talk", "--backend", "claude-code"],
        "E_INPUT_INVALID",
        /its thread is a codex thread/,
      ],
      [["--follow-up", "talk", "--access", "full"], "E_INPUT_INVALID", /started with --access read-only/],
      [
        ["--follow-up", "talk", "--thread", THREAD],
        "E_INPUT_INVALID",
        /--thread with --follow-up.*one or the other/,
      ],
      [["--follow-up", "talk", "--name", "other"], "E_INPUT_INVALID", /keeps its conversation's name/],
      [["--follow-up", "talk", "--worktree"], "E_INPUT_INVALID", /--worktree with --follow-up/],
      [["--follow-up", "../x"], "E_INPUT_INVALID", /is not a name/],
    ];
    const before = tree();
    for (const [args, code, message] of cases) {
      const result = await runCli(["dispatch", ...args, "--brief", "more", "--json"], { env });
      const error = json<{ error: { code: string; message: string; fix: string } }>(result).error;
      expect([args.join(" "), error.code], error.message).toEqual([args.join(" "), code]);
      expect(error.message).toMatch(message);
      expect(error.fix.length).toBeGreaterThan(0);
    }
    expect(tree()).toEqual(before);
    fs.writeFileSync(hold, "");
    await waitRecorded(env, "busy");
  }, 120_000);

  it("admits one of two follow-ups of one turn made at once, and refuses the other", async () => {
    const { bins, env } = setUp();
    const first = await dispatch(env, ["--backend", "codex", "--name", "talk", "--brief", "q"]);
    await waitRecorded(env, "talk");
    const hold = path.join(bins, "go");
    const held = { ...env, HOLD_UNTIL: hold };
    const both = await Promise.all(
      [1, 2].map(() =>
        runCli(["dispatch", "--follow-up", "talk", "--brief", "more", "--json"], { env: held }),
      ),
    );
    const admitted = both.filter((r) => r.code === 0).map((r) => json<Dispatched>(r).dispatched);
    for (const d of admitted) dispatched.push(d.dispatchId);
    const refused = both.filter((r) => r.code !== 0).map((r) => json<{ error: { code: string } }>(r).error);
    expect(admitted).toHaveLength(1);
    expect(refused.map((e) => e.code)).toEqual(["E_ADMIT_DUPLICATE"]);
    fs.writeFileSync(hold, "");
    await waitRecorded(env, "talk");
    const conversation = json<{ conversation: Turn[] }>(
      await runCli(["result", "--conversation", "talk", "--json"], { env }),
    ).conversation;
    expect(conversation.map((t) => t.dispatchId)).toEqual([first.dispatchId, admitted[0]?.dispatchId]);
  }, 120_000);
});
