import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AttemptSummary } from "../../src/dispatch/read/attempts.js";
import { isolatedHome, json, runCli } from "../helpers/cli.js";
import { calls, type FakeRun, fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { isolateGitConfig, makeRepo } from "../helpers/git.js";
import { isAlive, killPid, waitForPause } from "../helpers/processes.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

// The check (`--verify`; specs/dispatch.md, "Checks and races") with real processes: a real git repository,
// a real shell command as the check, fake codex runs that fix the work on the first turn, on the repair
// turn, or never, dispatched through the real CLI; the repair turns handed over by the real promoter.

isolateGitConfig();
const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

const THREAD = "01a2264d-a96b-7c23-b4e9-0484292c91b3";

/** A codex turn that says it is done, having written `fix` (or nothing) into its folder. */
function codexTurn(fix: string | null): FakeRun {
  const lines = recordedLines("codex", "text");
  return fix === null ? { lines, exit: 0 } : { lines, exit: 0, write: { file: "fixed.txt", text: fix } };
}

/** The check every case runs: passes once fixed.txt says "fixed"; counts its runs in `runs`. */
function checkOf(runs: string): string {
  return `echo run >> '${runs}'; if grep -q fixed fixed.txt 2>/dev/null; then echo all green; else echo "FAIL: fixed.txt does not say fixed" >&2; exit 1; fi`;
}

/** An isolated home, a repository to work in, a fake codex playing `turns`, and the check. */
function setUp(turns: FakeRun[]) {
  const { home, env: base } = isolatedHome();
  const bins = tempDir();
  const repo = makeRepo(path.join(tempDir(), "repo"), { "README.md": "# work\n" });
  const runs = path.join(bins, "check-runs");
  const env = { ...base, CATHERD_CODEX_BIN: fakeCli(bins, "codex", turns) };
  return { home, bins, repo, runs, env, check: checkOf(runs) };
}

type Setup = ReturnType<typeof setUp>;

async function dispatch(s: Setup, name: string, flags: string[]) {
  const started = await runCli(
    [
      "dispatch",
      "--backend",
      "codex",
      "--name",
      name,
      "--cwd",
      s.repo,
      "--brief",
      "fix it",
      "--json",
      ...flags,
    ],
    { env: s.env },
  );
  expect(started.code, started.stderr).toBe(0);
  const first = json<{ dispatched: { dispatchId: string; dir: string } }>(started).dispatched;
  dispatched.push(first.dispatchId);
  return first;
}

async function waitRecorded(s: Setup, name: string) {
  const waited = await runCli(["wait", name, "--json", "--timeout", "60s"], {
    env: s.env,
    timeoutMs: 90_000,
  });
  const [record] = json<{ records: Record<string, unknown>[] }>(waited).records;
  const full = json<{ attempts: AttemptSummary[] }>(await runCli(["result", name, "--json"], { env: s.env }));
  for (const a of full.attempts) dispatched.push(a.dispatchId);
  return { code: waited.code, record: record as Record<string, unknown>, attempts: full.attempts };
}

function runCount(s: Setup): number {
  return fs.existsSync(s.runs) ? fs.readFileSync(s.runs, "utf8").trim().split("\n").length : 0;
}

describe("a check that judges the turn, with real processes", () => {
  it("records ok with the check passed when the agent fixes it on its first turn", async () => {
    const s = setUp([codexTurn("fixed\n")]);
    const first = await dispatch(s, "first", ["--verify", s.check]);
    expect(JSON.parse(fs.readFileSync(path.join(first.dir, "spec.json"), "utf8")).verify).toEqual({
      command: s.check,
      timeoutMs: 30 * 60_000,
      repairs: 2,
    });
    const { code, record } = await waitRecorded(s, "first");
    expect(code).toBe(0);
    expect(record).toMatchObject({
      status: "ok",
      attempt: 1,
      verify: {
        command: s.check,
        passed: true,
        runs: [{ outcome: "passed", exitCode: 0, tail: ["all green"] }],
      },
    });
    expect(fs.readFileSync(path.join(first.dir, "verify.log"), "utf8")).toBe("all green\n");
    expect(runCount(s)).toBe(1);
  });

  it("sends the check's failure back on the same thread, and records ok once the repair turn fixes it", async () => {
    const s = setUp([codexTurn(null), codexTurn("fixed\n")]);
    await dispatch(s, "repaired", ["--verify", s.check]);
    const { code, record, attempts } = await waitRecorded(s, "repaired");
    expect(code).toBe(0);
    expect(record).toMatchObject({ status: "ok", attempt: 2, verify: { passed: true } });
    const runs = (record.verify as { runs: { outcome: string }[] }).runs;
    expect(runs.map((r) => r.outcome)).toEqual(["failed", "passed"]);
    expect(attempts.map((a) => [a.attempt, a.status, a.kind])).toEqual([
      [1, "failed", "verify"],
      [2, "ok", null],
    ]);
    const one = attempts[0] as AttemptSummary;
    const record1 = JSON.parse(fs.readFileSync(path.join(one.dir, "record.json"), "utf8"));
    expect(record1).toMatchObject({
      error: { kind: "verify", tail: ["FAIL: fixed.txt does not say fixed"] },
      next: { backend: "codex", why: "repair" },
    });
    expect(record1.error.message).toMatch(/failed \(exit code 1\): a repair turn follows/);
    // The repair resumed the thread with the check's command, exit code and output.
    const [call1, call2] = calls(s.bins, "codex") as [string[], string[]];
    expect(call1).not.toContain("resume");
    expect(call2.slice(0, 2)).toEqual(["exec", "resume"]);
    expect(call2).toContain(THREAD);
    const brief2 = fs.readFileSync(path.join((attempts[1] as AttemptSummary).dir, "brief.md"), "utf8");
    expect(brief2).toContain("exited with code 1");
    expect(brief2).toContain("FAIL: fixed.txt does not say fixed");
    expect(runCount(s)).toBe(2);
  });

  it("fails kind verify once the repairs are spent, with the tail in the record", async () => {
    const s = setUp([codexTurn(null)]);
    await dispatch(s, "never", ["--verify", s.check, "--verify-repairs", "1"]);
    const { code, record } = await waitRecorded(s, "never");
    expect(code).toBe(1);
    expect(record).toMatchObject({
      status: "failed",
      attempt: 2,
      next: null,
      error: { kind: "verify", tail: ["FAIL: fixed.txt does not say fixed"] },
      verify: { passed: false },
    });
    expect(String((record.error as { message: string }).message)).not.toMatch(/repair turn follows/);
    expect(calls(s.bins, "codex")).toHaveLength(2);
    expect(runCount(s)).toBe(2);
  });

  it("gives a check that hangs no repair turn: stopped at its time limit, verify-error", async () => {
    const s = setUp([codexTurn("fixed\n")]);
    const first = await dispatch(s, "hangs", ["--verify", "sleep 60", "--verify-timeout", "1s"]);
    const { code, record } = await waitRecorded(s, "hangs");
    expect(code).toBe(1);
    expect(record).toMatchObject({
      status: "failed",
      attempt: 1,
      next: null,
      error: { kind: "verify-error" },
      verify: { passed: null, runs: [{ outcome: "timed-out", exitCode: null }] },
    });
    expect(String((record.error as { message: string }).message)).toMatch(/ran past its time limit \(1s\)/);
    expect(calls(s.bins, "codex")).toHaveLength(1);
    const log = fs.readFileSync(path.join(first.dir, "supervisor.log"), "utf8");
    expect(log).toContain('"event":"check-stopped"');
  });

  it("gives a check that is not found no repair turn: verify-error in its own words", async () => {
    const s = setUp([codexTurn("fixed\n")]);
    await dispatch(s, "missing", ["--verify", "no-such-test-runner --all"]);
    const { code, record } = await waitRecorded(s, "missing");
    expect(code).toBe(1);
    expect(record).toMatchObject({
      status: "failed",
      error: { kind: "verify-error" },
      verify: { passed: null, runs: [{ outcome: "not-found", exitCode: 127 }] },
    });
    expect(String((record.error as { message: string }).message)).toMatch(/could not be run \(exit code 127/);
    expect(calls(s.bins, "codex")).toHaveLength(1);
  });

  it("runs no check after a turn that failed", async () => {
    const s = setUp([{ lines: ["not json at all"], exit: 2 }]);
    const first = await dispatch(s, "broken", ["--verify", s.check, "--verify-repairs", "0"]);
    const { record } = await waitRecorded(s, "broken");
    expect(record).toMatchObject({
      status: "failed",
      error: { kind: "cli" },
      verify: { passed: null, runs: [] },
    });
    expect(runCount(s)).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(first.dir, "verify.json"), "utf8"))).toMatchObject({
      state: "ended",
      outcome: null,
    });
  });

  it("keeps the conversation's check on a follow-up, and runs it in the worktree", async () => {
    const s = setUp([codexTurn("fixed\n"), codexTurn("fixed again\n")]);
    const first = await dispatch(s, "talk", ["--verify", s.check, "--worktree"]);
    expect((await waitRecorded(s, "talk")).record).toMatchObject({ status: "ok", verify: { passed: true } });
    // The worktree holds the fix; the checkout the dispatch was made from does not.
    const worktree = JSON.parse(fs.readFileSync(path.join(first.dir, "spec.json"), "utf8")).cwd as string;
    expect(fs.readFileSync(path.join(worktree, "fixed.txt"), "utf8")).toBe("fixed\n");
    expect(fs.existsSync(path.join(s.repo, "fixed.txt"))).toBe(false);
    const again = await runCli(["dispatch", "--follow-up", "talk", "--brief", "more", "--json"], {
      env: s.env,
    });
    expect(again.code, again.stderr).toBe(0);
    const turn2 = json<{ dispatched: { dir: string; dispatchId: string } }>(again).dispatched;
    dispatched.push(turn2.dispatchId);
    expect(JSON.parse(fs.readFileSync(path.join(turn2.dir, "spec.json"), "utf8")).verify.command).toBe(
      s.check,
    );
    const { record } = await waitRecorded(s, "talk");
    expect(record).toMatchObject({ status: "ok", verify: { passed: true, runs: [{ outcome: "passed" }] } });
    expect(runCount(s)).toBe(2);
  });

  it("runs an exec dispatch's check once and judges by it: no thread to repair on", async () => {
    const s = setUp([]);
    const started = await runCli(
      [
        "dispatch",
        "--backend",
        "exec",
        "--name",
        "cmd",
        "--cwd",
        s.repo,
        "--verify",
        s.check,
        "--json",
        "--",
        "true",
      ],
      { env: s.env },
    );
    expect(started.code, started.stderr).toBe(0);
    dispatched.push(json<{ dispatched: { dispatchId: string } }>(started).dispatched.dispatchId);
    const { record } = await waitRecorded(s, "cmd");
    expect(record).toMatchObject({ status: "failed", next: null, error: { kind: "verify" } });
    expect(runCount(s)).toBe(1);
    const refused = await runCli(
      ["dispatch", "--backend", "exec", "--verify", "true", "--verify-repairs", "1", "--", "true"],
      { env: s.env },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--verify-repairs needs an agent's thread; exec runs a command/);
  });

  it("stops a check that runs when the dispatch is cancelled, and records it cancelled", async () => {
    const s = setUp([codexTurn("fixed\n")]);
    const ran = path.join(s.bins, "check-started");
    const first = await dispatch(s, "stopped", ["--verify", `touch '${ran}'; sleep 60`]);
    await waitForFile(ran);
    const shown = await runCli(["status", "--json"], { env: s.env });
    expect(shown.stdout).toContain('"state":"verifying"');
    const cancelled = await runCli(["cancel", "stopped", "--wait", "--json"], {
      env: s.env,
      timeoutMs: 30_000,
    });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const record = JSON.parse(fs.readFileSync(path.join(first.dir, "record.json"), "utf8"));
    expect(record).toMatchObject({
      status: "cancelled",
      error: { kind: "cancelled" },
      verify: { passed: null, runs: [{ outcome: "cancelled" }] },
    });
  });
});

describe("a check whose supervisor dies", () => {
  it("is run once by the supervisor a reader starts, when the first died between the agent's end and the check", async () => {
    const s = setUp([codexTurn("fixed\n")]);
    const paused = { ...s, env: { ...s.env, CATHERD_TEST_ONLY_PAUSE_AT: "verifying" } };
    const first = await dispatch(paused, "killed", ["--verify", s.check]);
    // Its pid once written whole and the supervisor stopped there: never a pid read half-written (0 would
    // signal this test's own process group).
    const pid = await waitForPause(first.dir, "verifying");
    killPid(pid);
    await waitFor(`pid ${pid} to end`, () => (isAlive(pid) ? undefined : true));
    expect(fs.existsSync(path.join(first.dir, "exit.json"))).toBe(true);
    const { code, record } = await waitRecorded(s, "killed");
    expect(code).toBe(0);
    expect(record).toMatchObject({ status: "ok", verify: { passed: true, runs: [{ outcome: "passed" }] } });
    expect(runCount(s)).toBe(1);
    const log = fs.readFileSync(path.join(first.dir, "supervisor.log"), "utf8");
    expect(log).toMatch(/"event":"adopted".*"for":"check"/);
  });

  it("is waited for, not run again, when its supervisor died while it ran", async () => {
    const s = setUp([codexTurn("fixed\n")]);
    const go = path.join(s.bins, "go");
    const started = path.join(s.bins, "check-started");
    const check = `touch '${started}'; while [ ! -e '${go}' ]; do sleep 0.05; done; ${s.check}`;
    const first = await dispatch(s, "orphaned-check", ["--verify", check]);
    await waitForFile(started);
    const supervisor = JSON.parse(fs.readFileSync(path.join(first.dir, "supervisor.json"), "utf8"))
      .pid as number;
    killPid(supervisor);
    await waitFor(`pid ${supervisor} to end`, () => (isAlive(supervisor) ? undefined : true));
    const status = await runCli(["status", "--json"], { env: s.env });
    expect(status.stdout).toContain('"state":"verifying"');
    fs.writeFileSync(go, "");
    const { code, record } = await waitRecorded(s, "orphaned-check");
    expect(code).toBe(0);
    expect(record).toMatchObject({
      status: "ok",
      verify: { passed: true, runs: [{ outcome: "passed", exitCode: 0 }] },
    });
    expect(runCount(s)).toBe(1);
    expect(fs.readFileSync(path.join(first.dir, "supervisor.log"), "utf8")).toContain(
      '"event":"check-awaited"',
    );
  });
});

describe("a check and the machine's lock", () => {
  it("waits for a slot, and is verify-error when none comes free within its time limit", async () => {
    const s = setUp([]);
    const env = { ...s.env, CATHERD_LOCK_SLOTS: "1" };
    const held = path.join(s.bins, "held");
    const release = path.join(s.bins, "release");
    const holder = runCli(
      ["lock", "--", "/bin/sh", "-c", `touch '${held}'; while [ ! -e '${release}' ]; do sleep 0.05; done`],
      { env, timeoutMs: 60_000 },
    );
    try {
      await waitForFile(held);
      const busy = await runCli(
        [
          "dispatch",
          "--backend",
          "exec",
          "--name",
          "busy",
          "--verify",
          "echo checked",
          "--verify-timeout",
          "1s",
          "--json",
          "--",
          "true",
        ],
        { env },
      );
      dispatched.push(json<{ dispatched: { dispatchId: string } }>(busy).dispatched.dispatchId);
      const { record } = await waitRecorded({ ...s, env }, "busy");
      expect(record).toMatchObject({
        status: "failed",
        error: { kind: "verify-error" },
        verify: { passed: null, runs: [{ outcome: "slot-busy" }] },
      });
      expect(String((record.error as { message: string }).message)).toMatch(/never got a slot/);

      const waits = await runCli(
        [
          "dispatch",
          "--backend",
          "exec",
          "--name",
          "waits",
          "--verify",
          "echo checked",
          "--json",
          "--",
          "true",
        ],
        { env },
      );
      const d = json<{ dispatched: { dispatchId: string; dir: string } }>(waits).dispatched;
      dispatched.push(d.dispatchId);
      await waitFor("the check to wait for its slot", () => {
        const shown = fs.existsSync(path.join(d.dir, "verify.json"));
        return shown ? true : undefined;
      });
      const status = await runCli(["status"], { env });
      expect(status.stdout).toMatch(/waits .*verifying +\S+ +- +checking: echo checked/);
      fs.writeFileSync(release, "");
      const done = await waitRecorded({ ...s, env }, "waits");
      expect(done.record).toMatchObject({ status: "ok", verify: { passed: true } });
      expect(JSON.parse(fs.readFileSync(path.join(d.dir, "verify.json"), "utf8")).slotWaitMs).toBeGreaterThan(
        0,
      );
    } finally {
      fs.writeFileSync(release, "");
      expect((await holder).code).toBe(0);
    }
  });
});
