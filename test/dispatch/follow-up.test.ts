import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Turn } from "../../src/dispatch/follow-up/conversation.js";
import { json, runCli } from "../helpers/cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import {
  calls,
  type Dispatched,
  dispatch,
  firstOf,
  setUp,
  startSleeper,
  THREAD,
  treeOf,
  waitRecorded,
} from "../helpers/follow-up.js";
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

describe("dispatch --follow-up, with real processes", () => {
  it("resumes the first turn's thread in its worktree, stops the leftover of that turn first, and lists the conversation", async () => {
    const { bins, env, pidFile } = setUp({ leftover: true });
    const repo = makeRepo(tempDir(), { "a.txt": "one\n" });
    const first = await dispatch(dispatched, env, [
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

    const second = await dispatch(dispatched, env, ["--follow-up", "talk", "--brief", "and then?"]);
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

describe("dispatch --follow-up in a shared folder", () => {
  it("leaves a process in a checkout alone: a cwd others share proves nothing", async () => {
    const { env, pidFile } = setUp({ leftover: true });
    const cwd = tempDir();
    await dispatch(dispatched, env, ["--backend", "codex", "--name", "talk", "--cwd", cwd, "--brief", "q"]);
    await waitRecorded(env, "talk");
    const stray = Number(fs.readFileSync(pidFile, "utf8"));
    leftovers.push(stray);
    const second = await dispatch(dispatched, env, ["--follow-up", "talk", "--brief", "more"]);
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
    await dispatch(dispatched, env, [
      "--backend",
      "codex",
      "--name",
      "talk",
      "--access",
      "read-only",
      "--brief",
      "q",
    ]);
    await waitRecorded(env, "talk");
    await dispatch(dispatched, { ...env, FAKE_NO_THREAD: "1" }, [
      "--backend",
      "codex",
      "--name",
      "mute",
      "--brief",
      "q",
    ]);
    await waitRecorded(env, "mute");
    await dispatch(dispatched, env, ["--backend", "exec", "--name", "shell", "--", "true"]);
    await waitRecorded(env, "shell");
    const hold = path.join(bins, "go");
    const busy = await dispatch(dispatched, { ...env, HOLD_UNTIL: hold }, [
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
      [["--follow-up", "busy"], "E_ADMIT_DUPLICATE", /still (starting|running)/],
      [["--follow-up", "shell"], "E_INPUT_INVALID", /its backend, exec, has no thread to continue/],
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
    const first = await dispatch(dispatched, env, ["--backend", "codex", "--name", "talk", "--brief", "q"]);
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
