import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AttemptSummary } from "../../src/dispatch/read/attempts.js";
import { type CliResult, isolatedHome, json, runCli } from "../helpers/cli.js";
import { calls, type FakeRun, fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { waitForPause } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait.js";

// The failover ladder with real processes (specs/dispatch.md, "The failover ladder"): fake CLIs that
// print what the real ones printed on a quota, a rate limit and a success (test/fixtures/recorded),
// dispatched through the real CLI, supervised by real supervisors, handed over by the real promoter.

const dispatched: string[] = [];

/** Folders whose supervisor may stop itself after its record (CATHERD_TEST_ONLY_PAUSE_AT): it carries no
 * CATHERD_DISPATCH for reapAll to find, so a test that fails before it is killed must not leave it. */
const pausable: string[] = [];

afterEach(() => {
  for (const dir of pausable.splice(0)) {
    const pid = Number(readOr(path.join(dir, "test-paused-after-record")));
    // Only while that pid is still a catherd supervisor: never a process that took the number since.
    if (pid > 0 && readOr(`/proc/${pid}/cmdline`).includes("supervisor.js")) killQuietly(pid);
  }
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** The claude rate-limit recording, its reset time made six seconds from the run. */
function claudeRateLimited(): string[] {
  return recordedLines("claude", "ratelimit-long").map((l) =>
    l.replace(/resets at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/, "resets at {RESET+6}"),
  );
}

/**
 * An isolated home with a fake codex and a fake claude playing their runs, named to catherd as the
 * ladder's rungs are found (CATHERD_<B>_BIN).
 */
function codexThenClaude(codexRuns: FakeRun[], claudeRuns: FakeRun[]) {
  const { env: base } = isolatedHome();
  const bins = tempDir();
  const codex = fakeCli(bins, "codex", codexRuns);
  const claude = fakeCli(bins, "claude", claudeRuns);
  return { bins, claude, env: { ...base, CATHERD_CODEX_BIN: codex, CATHERD_CLAUDE_BIN: claude } };
}

describe("the failover ladder, with real processes", () => {
  it("climbs a quota to the next CLI, retries a rate limit at its reset time, and wait returns the last attempt's record", async () => {
    const { bins, claude, env } = codexThenClaude(
      [{ lines: recordedLines("codex", "quota"), exit: 1 }],
      [
        { lines: claudeRateLimited(), exit: 1 },
        { lines: recordedLines("claude", "text"), exit: 0 },
      ],
    );
    const started = await runCli(
      [
        "dispatch",
        "--backend",
        "codex",
        "--name",
        "ladder",
        "--brief",
        "say hello",
        "--fallback",
        "claude-code:claude-sonnet-4-5",
        "--retry-within",
        "1m",
        "--json",
      ],
      { env },
    );
    const first = json<{ dispatched: { dispatchId: string; dir: string } }>(started).dispatched;
    dispatched.push(first.dispatchId);
    const admit = JSON.parse(fs.readFileSync(path.join(first.dir, "admit.json"), "utf8"));
    expect(admit).toMatchObject({
      attempt: 1,
      failoverFrom: null,
      ladder: {
        rungs: [{ backend: "claude-code", model: "claude-sonnet-4-5", bin: claude }],
        retryWithinMs: 60_000,
      },
    });

    const waited = await runCli(["wait", "ladder", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    const result = json<{ records: Record<string, unknown>[] }>(waited);
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    expect(result.records).toHaveLength(1);
    expect(result.records[0]).toMatchObject({
      name: "ladder",
      backend: "claude-code",
      model: "claude-sonnet-4-5",
      status: "ok",
      attempt: 3,
      next: null,
      reply: "Hello from mockllm.",
    });

    const full = json<{ attempts: AttemptSummary[]; dispatchId: string }>(
      await runCli(["result", "ladder", "--json"], { env }),
    );
    for (const a of full.attempts) dispatched.push(a.dispatchId);
    expect(full.attempts.map((a) => [a.attempt, a.backend, a.status, a.kind])).toEqual([
      [1, "codex", "limit", "quota"],
      [2, "claude-code", "limit", "rate-limit"],
      [3, "claude-code", "ok", null],
    ]);
    const [one, two, three] = full.attempts as [AttemptSummary, AttemptSummary, AttemptSummary];
    const record1 = JSON.parse(fs.readFileSync(path.join(one.dir, "record.json"), "utf8"));
    expect(record1.next).toEqual({
      backend: "claude-code",
      model: "claude-sonnet-4-5",
      notBefore: null,
      why: "failover",
    });
    expect(JSON.parse(fs.readFileSync(path.join(one.dir, "next.json"), "utf8"))).toMatchObject({
      dispatchId: two.dispatchId,
      stopped: null,
    });
    // The rate limit named its reset: the third attempt, the same CLI, waited in the queue until then.
    const record2 = JSON.parse(fs.readFileSync(path.join(two.dir, "record.json"), "utf8"));
    expect(record2.next).toMatchObject({ backend: "claude-code", why: "retry" });
    expect(record2.next.notBefore).toBe(record2.error.retryAfter);
    const queued3 = JSON.parse(fs.readFileSync(path.join(three.dir, "queued.json"), "utf8"));
    expect(queued3).toMatchObject({ blockedBy: "not-before", notBefore: record2.error.retryAfter });
    const supervisor3 = JSON.parse(fs.readFileSync(path.join(three.dir, "supervisor.json"), "utf8"));
    expect(Date.parse(supervisor3.startedAt)).toBeGreaterThanOrEqual(Date.parse(record2.next.notBefore));
    const admit3 = JSON.parse(fs.readFileSync(path.join(three.dir, "admit.json"), "utf8"));
    expect(admit3).toMatchObject({
      attempt: 3,
      failoverFrom: two.dispatchId,
      ladder: { rungs: [], retries: 1 },
    });
    // Each CLI ran as often as the ladder says, claude with the rung's model.
    expect(calls(bins, "codex")).toHaveLength(1);
    expect(calls(bins, "claude")).toHaveLength(2);
    expect(calls(bins, "claude")[0]).toEqual(expect.arrayContaining(["--model", "claude-sonnet-4-5"]));

    // status shows the chain as one row.
    const status = json<{ dispatches: Record<string, unknown>[] }>(
      await runCli(["status", "--json"], { env }),
    );
    expect(status.dispatches).toHaveLength(1);
    expect(status.dispatches[0]).toMatchObject({
      dispatchId: three.dispatchId,
      attempt: 3,
      earlier: [
        { attempt: 1, backend: "codex", kind: "quota" },
        { attempt: 2, backend: "claude-code", kind: "rate-limit" },
      ],
    });
  });

  it("ends the chain on a failure another CLI would not fix, and on the last rung", async () => {
    const { bins, env } = codexThenClaude(
      [{ lines: recordedLines("codex", "context400"), exit: 1 }],
      [{ lines: recordedLines("claude", "text"), exit: 0 }],
    );
    const started = await runCli(
      [
        "dispatch",
        "--backend",
        "codex",
        "--name",
        "ctx",
        "--brief",
        "b",
        "--fallback",
        "claude-code",
        "--json",
      ],
      { env },
    );
    dispatched.push(json<{ dispatched: { dispatchId: string } }>(started).dispatched.dispatchId);
    const waited = await runCli(["wait", "ctx", "--json", "--timeout", "30s"], { env, timeoutMs: 60_000 });
    expect(waited.code).toBe(1);
    expect(json<{ records: Record<string, unknown>[] }>(waited).records[0]).toMatchObject({
      backend: "codex",
      status: "failed",
      error: expect.objectContaining({ kind: "context" }),
      attempt: 1,
      next: null,
    });
    expect(calls(bins, "claude")).toHaveLength(0);
  });

  it("refuses a ladder it could never climb before writing anything", async () => {
    const { home, env } = isolatedHome();
    const bins = tempDir();
    const codex = fakeCli(bins, "codex", [{ lines: [], exit: 0 }]);
    const cases: [string[], string, RegExp][] = [
      [["--fallback", "exec"], "E_INPUT_INVALID", /not a CLI backend/],
      [["--fallback", "nope:model"], "E_INPUT_INVALID", /not a CLI backend/],
      [["--fallback", "gemini:"], "E_INPUT_INVALID", /no model/],
      [["--retry-within", "2d"], "E_INPUT_INVALID", /over a day/],
    ];
    for (const [flags, code, message] of cases) {
      const r = await runCli(["dispatch", "--backend", "codex", "--brief", "b", "--json", ...flags], {
        env: { ...env, CATHERD_CODEX_BIN: codex },
      });
      expect(r.code, flags.join(" ")).toBe(2);
      const error = json<{ error: { code: string; message: string } }>(r).error;
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
    }
    const missing = await runCli(
      ["dispatch", "--backend", "codex", "--brief", "b", "--json", "--fallback", "gemini"],
      { env: { ...env, CATHERD_CODEX_BIN: codex, CATHERD_GEMINI_BIN: path.join(bins, "no-such-gemini") } },
    );
    expect(missing.code).toBe(3);
    expect(json<{ error: { code: string } }>(missing).error.code).toBe("E_BACKEND_MISSING");
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
  });

  it("cancel stops a chain whose hand-over is still to come, and wait then returns its last record", async () => {
    const { bins, first, env: plain } = await quotaChainPausedAfterRecord("stopme");
    const cancelled = await runCli(["cancel", "stopme", "--json"], { env: plain });
    expect(cancelled.code, cancelled.stdout + cancelled.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(first.dir, "next.json"), "utf8"))).toMatchObject({
      dispatchId: null,
      stopped: "cancelled",
    });
    const waited = await runCli(["wait", "stopme", "--json", "--timeout", "10s"], { env: plain });
    expect(json<{ records: Record<string, unknown>[] }>(waited).records[0]).toMatchObject({
      dispatchId: first.dispatchId,
      status: "limit",
    });
    expect(calls(bins, "claude")).toHaveLength(0);
    const shown = await runCli(["result", "stopme"], { env: plain });
    expect(shown.stdout).toContain("chain stopped: cancelled");
  });

  it("a supervisor SIGKILLed between its record and the hand-over: racing readers hand over once", async () => {
    const { bins, first, env: plain } = await quotaChainPausedAfterRecord("crash");
    // The chain holds its name while the hand-over is due.
    const same = await runCli(
      ["dispatch", "--backend", "codex", "--name", "crash", "--brief", "b", "--json"],
      {
        env: plain,
      },
    );
    expect(json<{ error: { code: string } }>(same).error.code).toBe("E_ADMIT_DUPLICATE");
    const readers = await Promise.all(
      ["status", "status", "show crash", "result crash", "wait crash --timeout 30s"].map((cmd) =>
        runCli([...cmd.split(" "), "--json"], { env: plain, timeoutMs: 60_000 }),
      ),
    );
    const waited = json<{ records: Record<string, unknown>[] }>(readers[4] as CliResult);
    expect(waited.records[0]).toMatchObject({ backend: "claude-code", status: "ok", attempt: 2 });
    dispatched.push(String(waited.records[0]?.dispatchId));
    const folders = fs.readdirSync(path.dirname(first.dir)).filter((f) => f !== "latest");
    expect(folders).toHaveLength(2);
    expect(calls(bins, "claude")).toHaveLength(1);
  });
});

/**
 * A chain `name` of a fake codex that hits its quota, falling back to a fake claude that answers; its
 * first supervisor SIGKILLed right after the record, before it starts the promoter: the hand-over is
 * due and nobody is doing it. Returns the environment for the readers (without the pause).
 */
async function quotaChainPausedAfterRecord(name: string) {
  const { bins, env } = codexThenClaude(
    [{ lines: recordedLines("codex", "quota"), exit: 1 }],
    [{ lines: recordedLines("claude", "text"), exit: 0 }],
  );
  const started = await runCli(
    ["dispatch", "--backend", "codex", "--name", name, "--brief", "b", "--fallback", "claude-code", "--json"],
    { env: { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "after-record" } },
  );
  const first = json<{ dispatched: { dispatchId: string; dir: string } }>(started).dispatched;
  dispatched.push(first.dispatchId);
  pausable.push(first.dir);
  await pausedAfterRecord(first.dir);
  return { bins, first, env };
}

/** Waits for the supervisor of `dir` to stop itself after its record, then SIGKILLs it (a crash there). */
async function pausedAfterRecord(dir: string): Promise<void> {
  const pid = await waitForPause(dir, "after-record");
  process.kill(pid, "SIGKILL");
  await waitFor("the paused supervisor gone", () => {
    try {
      process.kill(pid, 0);
      return undefined;
    } catch {
      return true;
    }
  });
}
