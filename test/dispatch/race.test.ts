import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/infra/clock.js";
import { runPaths } from "../../src/infra/paths.js";
import { tableLines } from "../../src/ui/page/race-rows.js";
import { RunModel } from "../../src/ui/server/run-model.js";
import { type CliResult, dispatchFolders, isolatedHome, json, runCli } from "../helpers/cli.js";
import { type FakeRun, fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { isolateGitConfig, makeRepo } from "../helpers/git.js";
import { waitForFile } from "../helpers/wait.js";

// A race with real processes (specs/dispatch.md, "A race"): a real git repository whose check (a test
// script) fails until `answer.txt` says "right", fake CLIs that print what the real ones printed and write
// the right answer, the wrong one or nothing, each attempt in its own worktree, the race dispatched,
// waited for, read and cancelled through the real CLI.

isolateGitConfig();
const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

/** The check: exits 0 only once answer.txt says "right". */
const CHECK = 'test "$(cat answer.txt 2>/dev/null)" = right || { echo "answer.txt is not right"; exit 1; }';

/** A run of a fake CLI (its recorded plain answer) that first writes `answer`, or nothing. */
function run(cli: "codex" | "claude", answer: string | null, extra: Partial<FakeRun> = {}): FakeRun {
  return {
    lines: recordedLines(cli, "text"),
    exit: 0,
    ...(answer === null ? {} : { write: { file: "answer.txt", text: answer } }),
    ...extra,
  };
}

/** The claude recording with its own figure for the cost changed: the CLI's figure is the record's cost. */
function claudeCosting(usd: number, answer: string | null): FakeRun {
  const lines = recordedLines("claude", "text").map((l) =>
    l
      .replace('"total_cost_usd":0.0953', `"total_cost_usd":${usd}`)
      .replace('"costUSD":0.0953', `"costUSD":${usd}`),
  );
  return { lines, exit: 0, ...(answer === null ? {} : { write: { file: "answer.txt", text: answer } }) };
}

/** An isolated home, a repository with the check, and fake codex and claude playing `runs`. */
function setUp(runs: { codex: FakeRun[]; claude: FakeRun[] }) {
  const { home, env: base } = isolatedHome();
  const bins = tempDir();
  const repo = makeRepo(path.join(tempDir(), "repo"), { "check.sh": `${CHECK}\n`, "answer.txt": "wrong\n" });
  const env: NodeJS.ProcessEnv = {
    ...base,
    CATHERD_CODEX_BIN: fakeCli(bins, "codex", runs.codex),
    CATHERD_CLAUDE_BIN: fakeCli(bins, "claude", runs.claude),
  };
  return { home, bins, repo, env };
}

interface RaceAnswer {
  race: {
    name: string;
    raceId: string;
    pick: string;
    dir: string;
    attempts: {
      name: string;
      dispatchId: string;
      dir: string;
      queued: boolean;
      worktree: { branch: string };
    }[];
  };
}

interface RaceData {
  name: string;
  decided: boolean;
  winner: { attempt: number; name: string; branch: string | null; patches: string[] } | null;
  attempts: {
    attempt: number;
    name: string;
    backend: string;
    check: string | null;
    repairs: number;
    status: string | null;
    kind: string | null;
    costUsd: number | null;
    added: number | null;
    removed: number | null;
  }[];
}

async function race(
  env: NodeJS.ProcessEnv,
  repo: string,
  flags: string[],
): Promise<{ result: CliResult; answer: RaceAnswer | null }> {
  const result = await runCli(
    [
      "dispatch",
      "--backend",
      "codex",
      "--name",
      "fix",
      "--worktree",
      "--verify",
      "sh check.sh",
      "--json",
      ...flags,
    ],
    { env, cwd: repo, input: "make the check pass" },
  );
  if (result.code !== 0) return { result, answer: null };
  const answer = json<RaceAnswer>(result);
  dispatched.push(...answer.race.attempts.map((a) => a.dispatchId));
  return { result, answer };
}

/** Waits for every attempt of the race to be recorded, so that no process is left behind. */
async function settled(env: NodeJS.ProcessEnv, names: string[]): Promise<void> {
  const waited = await runCli(["wait", ...names, "--timeout", "60s"], { env, timeoutMs: 90_000 });
  expect(waited.code, waited.stdout + waited.stderr).not.toBe(124);
  // A chain's later turns (repairs) are dispatches too: reap them all.
  for (const dir of dispatchFolders(env.CATHERD_HOME as string)) dispatched.push(path.basename(dir));
}

describe("a race, with real processes", () => {
  it("lets the second attempt win when it passes first, and cancels the first", async () => {
    const hold = path.join(tempDir(), "never");
    const { home, repo, env } = setUp({
      codex: [run("codex", "wrong", { holdAt: { line: 0, until: hold } })],
      claude: [run("claude", "right")],
    });
    const { result, answer } = await race(env, repo, ["--also", "claude-code"]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(answer?.race.attempts.map((a) => a.name)).toEqual(["fix.1", "fix.2"]);
    expect(answer?.race.pick).toBe("first-pass");

    const waited = await runCli(["wait", "fix", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    const data = json<{ race: RaceData }>(waited).race;
    expect(data.winner?.name).toBe("fix.2");
    await settled(env, ["fix.1", "fix.2"]);

    const shown = await runCli(["result", "fix", "--json"], { env });
    expect(shown.code, shown.stderr).toBe(0);
    const report = json<{ race: RaceData }>(shown).race;
    expect(report.attempts.map((a) => [a.name, a.backend, a.check, a.status])).toEqual([
      ["fix.1", "codex", "not run", "cancelled"],
      ["fix.2", "claude-code", "passed", "ok"],
    ]);
    expect(report.winner?.branch).toMatch(/^catherd\/fix\.2-/);
    expect(report.attempts[1]).toMatchObject({ added: 1, removed: 1 });
    const patch = fs.readFileSync(report.winner?.patches[0] as string, "utf8");
    expect(patch).toContain("+right");
    const text = await runCli(["result", "fix"], { env });
    expect(text.stdout).toContain("won by fix.2");
    expect(text.stdout).toContain("changes.patch");
    // A verb that takes one dispatch says the name is a race's, and how to name an attempt.
    const shownRace = json<{ error: { code: string; message: string; fix: string } }>(
      await runCli(["show", "fix", "--json"], { env }),
    ).error;
    expect(shownRace.code).toBe("E_DISPATCH_NOT_FOUND");
    expect(shownRace.message).toContain("fix is a race of 2 attempts (fix.1, fix.2)");
    expect(shownRace.fix).toContain("catherd show fix.1");

    // The dashboard's model of the run marks each attempt with its race; the page makes them one line.
    const model = new RunModel(runPaths(home, "default"), () => {}, systemClock);
    await model.loaded;
    const lines = tableLines(model.rows());
    model.close();
    expect(lines.map((l) => (l.kind === "race" ? `race ${l.group.name}` : l.row.name))).toEqual([
      "race fix",
      "fix.1",
      "fix.2",
    ]);
  });

  it("with cheapest-pass, lets every attempt run and picks the passing one that cost least", async () => {
    const { repo, env } = setUp({
      codex: [run("codex", "wrong")],
      claude: [claudeCosting(0.9, "right"), claudeCosting(0.2, "right")],
    });
    const { answer } = await race(env, repo, [
      "--backend",
      "claude-code",
      "--attempts",
      "2",
      "--also",
      "codex",
      "--verify-repairs",
      "0",
      "--pick",
      "cheapest-pass",
    ]);
    expect(answer?.race.attempts.map((a) => a.name)).toEqual(["fix.1", "fix.2", "fix.3"]);
    const waited = await runCli(["wait", "fix", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    const data = json<{ race: RaceData }>(waited).race;
    // Nothing was cancelled: every attempt ran to its end; codex never passed.
    expect(data.attempts.map((a) => [a.backend, a.check, a.status])).toEqual([
      ["claude-code", "passed", "ok"],
      ["claude-code", "passed", "ok"],
      ["codex", "failed", "failed"],
    ]);
    // Which claude attempt drew the cheap run is the machine's choice; the winner is the one that did.
    const cheap = data.attempts.find((a) => a.costUsd === 0.2);
    expect(data.attempts.filter((a) => a.costUsd === 0.9)).toHaveLength(1);
    expect(data.winner?.attempt).toBe(cheap?.attempt);
    await settled(env, ["fix.1", "fix.2", "fix.3"]);
  });

  it("counts an attempt's repair turns as its own, and with --pick all decides nothing", async () => {
    const { repo, env } = setUp({
      codex: [run("codex", "wrong"), run("codex", "right")],
      claude: [run("claude", "wrong")],
    });
    await race(env, repo, ["--also", "claude-code", "--verify-repairs", "1", "--pick", "all"]);
    const waited = await runCli(["wait", "fix", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    // No winner with --pick all; wait exits 0 because an attempt passed.
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    const data = json<{ race: RaceData }>(waited).race;
    expect(data.winner).toBeNull();
    expect(data.attempts.map((a) => [a.name, a.check, a.repairs, a.status, a.kind])).toEqual([
      ["fix.1", "passed", 1, "ok", null],
      ["fix.2", "failed", 1, "failed", "verify"],
    ]);
    await settled(env, ["fix.1", "fix.2"]);
    const text = await runCli(["result", "fix"], { env });
    expect(text.stdout).toContain("every attempt has ended");
    expect(text.stdout).toMatch(/fix\.1 +codex +passed, 1 repair/);
  });

  it("is settled by wait when the winner's supervisor died right after its record", async () => {
    const hold = path.join(tempDir(), "never");
    const { repo, env: base } = setUp({
      codex: [run("codex", "wrong", { holdAt: { line: 0, until: hold } })],
      claude: [run("claude", "right")],
    });
    const env = { ...base, CATHERD_TEST_ONLY_PAUSE_AT: "after-record" };
    const { answer } = await race(env, repo, ["--also", "claude-code"]);
    const [loser, winner] = answer?.race.attempts ?? [];
    // The winner's supervisor stops right after its record, before it settles the race; it is killed there.
    const paused = await waitForFile(path.join(winner?.dir as string, "test-paused-after-record"), 60_000);
    process.kill(Number(paused.trim()), "SIGKILL");
    expect(fs.existsSync(path.join(answer?.race.dir as string, "decision.json"))).toBe(false);

    const waited = await runCli(["wait", "fix", "--json", "--timeout", "60s"], {
      env: base,
      timeoutMs: 90_000,
    });
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    expect(json<{ race: RaceData }>(waited).race.winner?.name).toBe("fix.2");
    const decision = JSON.parse(
      fs.readFileSync(path.join(answer?.race.dir as string, "decision.json"), "utf8"),
    );
    expect(decision).toMatchObject({ winner: 2, by: "reader", pick: "first-pass" });
    // The loser was cancelled by the reader; its supervisor pauses after its record too, and is let go.
    const loserPaused = await waitForFile(
      path.join(loser?.dir as string, "test-paused-after-record"),
      60_000,
    );
    process.kill(Number(loserPaused.trim()), "SIGKILL");
    const report = json<{ race: RaceData }>(await runCli(["result", "fix", "--json"], { env: base })).race;
    expect(report.attempts.map((a) => a.status)).toEqual(["cancelled", "ok"]);
    await settled(base, ["fix.1", "fix.2"]);
  });

  it("cancels every attempt of a race by its name, and wait then says no attempt passed", async () => {
    const hold = path.join(tempDir(), "never");
    const { home, repo, env } = setUp({
      codex: [run("codex", null, { holdAt: { line: 0, until: hold } })],
      claude: [run("claude", null)],
    });
    await race(env, repo, ["--attempts", "2"]);
    const cancelled = await runCli(["cancel", "fix", "--wait", "--json"], { env, timeoutMs: 60_000 });
    expect(cancelled.code, cancelled.stdout + cancelled.stderr).toBe(0);
    const waited = await runCli(["wait", "fix", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    expect(waited.code).toBe(1);
    const data = json<{ race: RaceData }>(waited).race;
    expect(data.decided).toBe(true);
    expect(data.winner).toBeNull();
    expect(data.attempts.map((a) => a.status)).toEqual(["cancelled", "cancelled"]);
    await settled(env, ["fix.1", "fix.2"]);

    // clean removes the attempts' folders, then the race none of whose attempts remain.
    const cleaned = await runCli(["clean", "--older-than", "0", "--force"], { env, timeoutMs: 60_000 });
    expect(cleaned.code, cleaned.stdout + cleaned.stderr).toBe(0);
    expect(fs.existsSync(path.join(home, "runs/default/races"))).toBe(false);
    const gone = await runCli(["result", "fix"], { env });
    expect(gone.stderr).toContain("E_DISPATCH_NOT_FOUND");
  });

  it("queues the attempts the run's cap holds, and ends a queued loser without starting it", async () => {
    const { home, bins, repo, env } = setUp({
      codex: [run("codex", "right")],
      claude: [run("claude", "right")],
    });
    const { result, answer } = await race(env, repo, ["--attempts", "2", "--max-parallel", "1"]);
    // Without --queue, the cap refuses the whole race, and nothing of it is written.
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("E_ADMIT_CAPACITY");
    expect(answer).toBeNull();
    expect(dispatchFolders(home)).toEqual([]);

    const queued = await race(env, repo, ["--attempts", "2", "--max-parallel", "1", "--queue"]);
    expect(queued.answer?.race.attempts.map((a) => a.queued)).toEqual([false, true]);
    const waited = await runCli(["wait", "fix", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    await settled(env, ["fix.1", "fix.2"]);
    const report = json<{ race: RaceData }>(await runCli(["result", "fix", "--json"], { env })).race;
    expect(report.winner?.name).toBe("fix.1");
    expect(report.attempts[1]).toMatchObject({ status: "cancelled", check: "not run" });
    // The loser never ran: the fake codex ran once, for the winner.
    expect(fs.readFileSync(path.join(bins, "codex.count"), "utf8")).toBe("1");
  });
});
