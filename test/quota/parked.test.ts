import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { ROOT, reapAll, tempDir } from "../helpers/folders.js";
import { dispatchClaude, fakeClaude, startsIn, waitAll } from "../helpers/quota.js";
import { waitFor } from "../helpers/wait.js";

// Work parked for an account's window, with real processes (specs/quota.md): admission parks it, the
// home's waker (or, after a reboot, the first command) starts it at the reset, oldest first and once.
// Times are real and a few seconds ahead: each wait is on a file or a record, with a deadline.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

/** Seeds the account's state as a supervisor that saw its window would have written it. */
function seedWindow(home: string, account: string, window: Record<string, unknown>): void {
  const dir = path.join(home, "quota", "claude-code");
  fs.mkdirSync(dir, { recursive: true });
  const seen = {
    limit: "claude",
    window: "five_hour",
    usedPercent: null,
    windowMinutes: 300,
    status: null,
    seenAt: new Date(Date.now() - 60_000).toISOString(),
    ...window,
  };
  fs.writeFileSync(
    path.join(dir, `${account}.json`),
    JSON.stringify({ schema: 1, backend: "claude-code", account, windows: [seen] }),
  );
}

/** The waker exits once nothing is parked: its lock goes with it. */
async function wakerGone(home: string) {
  await waitFor(
    "the waker to exit",
    () => (fs.existsSync(path.join(home, "waker.lock")) ? undefined : true),
    20_000,
  );
}

describe("work parked for an account's window", () => {
  it("parks ten dispatches behind a spent window and starts each once at its reset, one first to try it", async () => {
    const { home, env: base } = isolatedHome();
    const log = path.join(tempDir(), "starts.log");
    const env = { ...base, CATHERD_CLAUDE_BIN: fakeClaude(log).bin };
    const resetMs = Math.ceil((Date.now() + 10_000) / 1000) * 1000;
    seedWindow(home, "default", { status: "rejected", resetsAt: new Date(resetMs).toISOString() });
    const names = Array.from({ length: 10 }, (_, i) => `p${i}`);
    const admitted = await Promise.all(names.map((n) => dispatchClaude(env, n, dispatched)));
    const late = Date.now() >= resetMs;
    if (!late) for (const d of admitted) expect(d).toMatchObject({ queued: true, blockedBy: "window" });
    if (!late) {
      const queued = JSON.parse(fs.readFileSync(path.join(admitted[0]?.dir ?? "", "queued.json"), "utf8"));
      expect(queued.blocker).toMatchObject({ backend: "claude-code", accounts: "default" });
      expect(Date.parse(queued.blocker.until)).toBe(resetMs);
      const shown = await runCli(["show", "p0"], { env });
      expect(shown.stdout).toMatch(/claude-code default out of window \(claude\/five_hour\), until \d{4}-/);
    }
    await waitAll(env, names);
    const starts = startsIn(log);
    expect(starts.map((s) => s.name).sort()).toEqual([...names].sort());
    for (const s of starts) expect(s.at).toBeGreaterThanOrEqual(resetMs - 1000);
    // The first to start ran alone: the window had not said it reset, until that dispatch was served.
    const [first, ...rest] = [...starts].sort((a, b) => a.at - b.at);
    const firstRecord = recordNamed(home, first?.name ?? "");
    for (const s of rest) expect(s.at).toBeGreaterThanOrEqual(Date.parse(String(firstRecord.endedAt)) - 1000);
    await wakerGone(home);
    expect(fs.existsSync(path.join(home, "parked", "default.json"))).toBe(false);
  }, 150_000);

  it("tries a reset once: the first dispatch after it runs into the wall again, and the rest park anew", async () => {
    const { home, env: base } = isolatedHome();
    const log = path.join(tempDir(), "starts.log");
    const claude = fakeClaude(log, 10_000);
    const env = { ...base, CATHERD_CLAUDE_BIN: claude.bin };
    const resetMs = Math.ceil((Date.now() + 4000) / 1000) * 1000;
    seedWindow(home, "default", { status: "rejected", resetsAt: new Date(resetMs).toISOString() });
    claude.limitOnce();
    claude.go();
    const admitted: Awaited<ReturnType<typeof dispatchClaude>>[] = [];
    for (const name of ["w1", "w2", "w3"]) admitted.push(await dispatchClaude(env, name, dispatched));
    if (Date.now() < resetMs)
      expect(admitted.map((d) => d.blockedBy)).toEqual(["window", "window", "window"]);
    await waitAll(env, ["w1"]);
    const probe = recordNamed(home, "w1");
    expect(probe).toMatchObject({ status: "limit", error: { kind: "rate-limit" } });
    const again = Date.parse(String((probe.error as { retryAfter: string }).retryAfter));
    expect(again).toBeGreaterThan(resetMs);
    // The reported reset was wrong: the others were not started into the wall, and wait for the new one
    // (their marks say so once the probe's promoter has judged the queue again, right after its record).
    if (Date.now() < again - 2000) {
      const untils = () =>
        admitted
          .slice(1)
          .map((d) => JSON.parse(fs.readFileSync(path.join(d.dir, "queued.json"), "utf8")).blocker?.until);
      const parkedAnew = () => (untils().every((u) => Date.parse(u ?? "") === again) ? true : undefined);
      await waitFor("the others parked until the new reset", parkedAnew, again - Date.now() - 1000);
      expect(startsIn(log).map((s) => s.name)).toEqual(["w1"]);
    }
    await waitAll(env, ["w2", "w3"]);
    const starts = startsIn(log);
    expect(starts.map((s) => s.name)).toEqual(["w1", "w2", "w3"]);
    for (const s of starts.slice(1)) expect(s.at).toBeGreaterThanOrEqual(again - 1000);
    await wakerGone(home);
  }, 120_000);

  it("after a reboot with work parked (no waker), the first command starts what is due", async () => {
    const { home, env: base } = isolatedHome();
    const log = path.join(tempDir(), "starts.log");
    const env = { ...base, CATHERD_CLAUDE_BIN: fakeClaude(log).bin, CATHERD_TEST_ONLY_NO_WAKER: "1" };
    const inMin = (min: number) => new Date(Date.now() + min * 60_000).toISOString();
    seedWindow(home, "default", { usedPercent: 100, resetsAt: inMin(60) });
    const parked = [await dispatchClaude(env, "a", dispatched), await dispatchClaude(env, "b", dispatched)];
    expect(parked.map((d) => d.blockedBy)).toEqual(["window", "window"]);
    expect(fs.existsSync(path.join(home, "parked", "default.json"))).toBe(true);
    // The machine was down when the window reset: its time has passed, and nothing ran to see it.
    seedWindow(home, "default", { usedPercent: 100, resetsAt: inMin(-1), seenAt: inMin(-90) });
    const index = path.join(home, "parked", "default.json");
    fs.writeFileSync(index, JSON.stringify({ schema: 1, run: "default", until: inMin(-1) }));
    expect(fs.existsSync(path.join(home, "waker.lock"))).toBe(false);
    expect(startsIn(log)).toEqual([]);
    await runCli(["status"], { env });
    await waitAll(env, ["a", "b"]);
    expect(startsIn(log).map((s) => s.name)).toEqual(["a", "b"]);
    expect(fs.existsSync(index)).toBe(false);
  }, 120_000);

  it("takes a run out of the parked index when its last parked dispatch is cancelled, starting no waker", async () => {
    const { home, env: base } = isolatedHome();
    const env = { ...base, CATHERD_CLAUDE_BIN: fakeClaude(path.join(tempDir(), "starts.log")).bin };
    seedWindow(home, "default", {
      status: "rejected",
      resetsAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const index = path.join(home, "parked", "default.json");
    await dispatchClaude({ ...env, CATHERD_TEST_ONLY_NO_WAKER: "1" }, "c", dispatched);
    expect(fs.existsSync(index)).toBe(true);
    const cancelled = await runCli(["cancel", "c", "--json"], { env });
    expect(cancelled.code, cancelled.stdout).toBe(0);
    expect(fs.existsSync(index)).toBe(false);
    expect(fs.existsSync(path.join(home, "waker.lock"))).toBe(false);
    expect(recordNamed(home, "c")).toMatchObject({ status: "cancelled" });
  }, 60_000);

  it("runs --account auto on the account whose window resets soonest, and on the other once it is spent", async () => {
    const { home, env: base } = isolatedHome();
    const log = path.join(tempDir(), "starts.log");
    const env: NodeJS.ProcessEnv = { ...base, CATHERD_CLAUDE_BIN: fakeClaude(log).bin };
    delete env.CLAUDE_CONFIG_DIR;
    const second = tempDir();
    const added = await runCli(["account", "add", "second", "--backend", "claude-code", "--dir", second], {
      env,
    });
    expect(added.code, added.stdout + added.stderr).toBe(0);
    const inMin = (min: number) => new Date(Date.now() + min * 60_000).toISOString();
    seedWindow(home, "default", { usedPercent: 40, resetsAt: inMin(300) });
    seedWindow(home, "second", { usedPercent: 60, resetsAt: inMin(60) });
    await dispatchClaude(env, "one", dispatched, ["--account", "auto"]);
    await waitAll(env, ["one"]);
    seedWindow(home, "second", { status: "rejected", resetsAt: inMin(60) });
    await dispatchClaude(env, "two", dispatched, ["--account", "auto"]);
    await waitAll(env, ["two"]);
    expect(startsIn(log).map((s) => [s.name, s.config])).toEqual([
      ["one", second],
      ["two", null],
    ]);
    expect(recordNamed(home, "one").account).toBe("second");
    expect(recordNamed(home, "two").account).toBe("default");
    const list = JSON.parse((await runCli(["account", "list", "--json"], { env })).stdout).accounts;
    expect(list.map((a: { name: string; gate: { state: string } }) => [a.name, a.gate.state])).toEqual([
      ["default", "open"],
      ["second", "held"],
    ]);
    const usage = JSON.parse((await runCli(["usage", "--by", "account", "--json"], { env })).stdout);
    expect(usage.accounts.map((a: { name: string }) => a.name)).toEqual(["default", "second"]);
    expect(usage.groups.map((g: { key: string }) => g.key).sort()).toEqual([
      "claude-code/default",
      "claude-code/second",
    ]);
  }, 120_000);

  it("moves a pool's dispatch stopped by its account's window to the other account at once", async () => {
    const { home, env: base } = isolatedHome();
    const log = path.join(tempDir(), "starts.log");
    const claude = fakeClaude(log, 600_000);
    const env: NodeJS.ProcessEnv = { ...base, CATHERD_CLAUDE_BIN: claude.bin };
    delete env.CLAUDE_CONFIG_DIR;
    const second = tempDir();
    await runCli(["account", "add", "second", "--backend", "claude-code", "--dir", second], { env });
    claude.limitOnce();
    claude.go();
    await dispatchClaude(env, "moved", dispatched, ["--account", "auto"]);
    const waited = await runCli(["wait", "moved", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    expect(waited.code, waited.stdout).toBe(0);
    const last = JSON.parse(waited.stdout).records[0];
    expect(last).toMatchObject({ status: "ok", account: "second", attempt: 2 });
    // Both of its accounts were open: the tie went by name, and the first one's window then held it.
    expect(startsIn(log).map((s) => s.config)).toEqual([null, second]);
    const first = recordNamed(home, "moved", last.failoverFrom);
    expect(first).toMatchObject({ status: "limit", account: "default", next: { why: "account" } });
    for (const d of [first.dispatchId, last.dispatchId]) dispatched.push(String(d));
  }, 120_000);

  it("parks the run's queued work for an account when a dispatch runs into its window", async () => {
    const { home, env: base } = isolatedHome();
    const log = path.join(tempDir(), "starts.log");
    const claude = fakeClaude(log, 10_000);
    const env = { ...base, CATHERD_CLAUDE_BIN: claude.bin };
    claude.limitOnce();
    await dispatchClaude(env, "hit", dispatched, ["--max-parallel", "1"]);
    const queued = [
      await dispatchClaude(env, "q1", dispatched, ["--queue"]),
      await dispatchClaude(env, "q2", dispatched, ["--queue"]),
    ];
    expect(queued.map((q) => q.blockedBy)).toEqual(["capacity", "capacity"]);
    claude.go();
    await waitAll(env, ["hit"]);
    const hitRecord = recordNamed(home, "hit");
    expect(hitRecord).toMatchObject({ status: "limit", account: "default", error: { kind: "rate-limit" } });
    const reset = Date.parse(String((hitRecord.error as { retryAfter: string }).retryAfter));
    // Marked so by the promotion that follows its record (its promoter's, or a reader's).
    if (Date.now() < reset - 2000) {
      const marks = () =>
        queued.map((q) => JSON.parse(fs.readFileSync(path.join(q.dir, "queued.json"), "utf8")));
      const parked = () =>
        marks().every((m) => m.blockedBy === "window" && Date.parse(m.blocker?.until ?? "") === reset)
          ? true
          : undefined;
      await waitFor("the queued ones parked until the reset", parked, reset - Date.now() - 1000);
      expect(startsIn(log).map((s) => s.name)).toEqual(["hit"]);
    }
    await waitAll(env, ["q1", "q2"]);
    const starts = startsIn(log);
    expect(starts.map((s) => s.name)).toEqual(["hit", "q1", "q2"]);
    for (const s of starts.slice(1)) expect(s.at).toBeGreaterThanOrEqual(reset - 1000);
    await wakerGone(home);
  }, 120_000);
});

describe("the waker", () => {
  it("ends at once when what it waits for is started by someone else, its index emptied", async () => {
    const { home } = isolatedHome();
    const index = path.join(home, "parked", "default.json");
    fs.mkdirSync(path.dirname(index), { recursive: true });
    const later = new Date(Date.now() + 45_000).toISOString();
    fs.writeFileSync(index, JSON.stringify({ schema: 1, run: "default", until: later }));
    const waker = spawn(process.execPath, [path.join(ROOT, "dist/bin/waker.js"), home], { stdio: "ignore" });
    const ended = new Promise<number | null>((resolve) => waker.once("exit", (code) => resolve(code)));
    try {
      await waitFor("the waker's lock", () =>
        fs.existsSync(path.join(home, "waker.lock")) ? true : undefined,
      );
      fs.rmSync(index);
      const code = await Promise.race([
        ended,
        new Promise<"late">((r) => setTimeout(() => r("late"), 10_000)),
      ]);
      expect(code).toBe(0);
    } finally {
      waker.kill("SIGKILL");
      await ended;
    }
  });
});

describe("--account and --window-headroom, refused before anything is written", () => {
  it.each([
    [["--backend", "claude-code", "--account", "nobody"], /claude-code has no such account/],
    [["--backend", "exec", "--account", "default"], /exec: it runs a command, which has no account/],
    [
      ["--backend", "claude-code", "--window-headroom", "0"],
      /--window-headroom "0": a percent from 1 to 100/,
    ],
    [["--backend", "claude-code", "--window-headroom", "101%"], /a percent from 1 to 100/],
  ])("%j", async (flags, message) => {
    const { env: base } = isolatedHome();
    const env = { ...base, CATHERD_CLAUDE_BIN: fakeClaude(path.join(tempDir(), "log")).bin };
    const result = await runCli(["dispatch", ...flags, "--brief", "x", "--json", "--", "true"], { env });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout).error.message).toMatch(message);
  });
});

/** The record of `name` (its latest attempt, or the attempt `id`). */
describe("--run-account: the run's accounts, for every dispatch of it that names none", () => {
  it("is remembered in run.json, taken by the run's next dispatches, given way to by --account, and forgotten", async () => {
    const { home, env: base } = isolatedHome();
    const log = path.join(tempDir(), "starts.log");
    const env: NodeJS.ProcessEnv = { ...base, CATHERD_CLAUDE_BIN: fakeClaude(log).bin };
    delete env.CLAUDE_CONFIG_DIR;
    const second = tempDir();
    await runCli(["account", "add", "second", "--backend", "claude-code", "--dir", second], { env });
    await dispatchClaude(env, "r1", dispatched, ["--run-account", "second"]);
    await waitAll(env, ["r1"]);
    const runFile = JSON.parse(fs.readFileSync(path.join(home, "runs", "default", "run.json"), "utf8"));
    expect(runFile.account).toBe("second");
    await dispatchClaude(env, "r2", dispatched);
    await waitAll(env, ["r2"]);
    await dispatchClaude(env, "r3", dispatched, ["--account", "default"]);
    await waitAll(env, ["r3"]);
    await dispatchClaude(env, "r4", dispatched, ["--run-account", "none"]);
    await waitAll(env, ["r4"]);
    expect(startsIn(log).map((s) => [s.name, s.config])).toEqual([
      ["r1", second],
      ["r2", second],
      ["r3", null],
      ["r4", null],
    ]);
    const forgotten = JSON.parse(fs.readFileSync(path.join(home, "runs", "default", "run.json"), "utf8"));
    expect(forgotten.account).toBeUndefined();
    const bad = await runCli(
      ["dispatch", "--backend", "exec", "--run-account", "a b", "--json", "--", "true"],
      {
        env,
      },
    );
    expect(JSON.parse(bad.stdout).error.message).toMatch(/--run-account "a b" is not an account's name/);
  }, 120_000);
});

describe("$CATHERD_ACCOUNT: the account of every dispatch that names none", () => {
  it("is taken by a CLI's dispatch, checked as --account is, and ignored by exec", async () => {
    const { env: base } = isolatedHome();
    const env = {
      ...base,
      CATHERD_CLAUDE_BIN: fakeClaude(path.join(tempDir(), "log")).bin,
      CATHERD_ACCOUNT: "nobody",
    };
    const claude = await runCli(["dispatch", "--backend", "claude-code", "--brief", "x", "--json"], { env });
    expect(claude.code).toBe(2);
    expect(JSON.parse(claude.stdout).error.message).toMatch(
      /--account "nobody": claude-code has no such account/,
    );
    const exec = await runCli(["dispatch", "--backend", "exec", "--name", "plain", "--json", "--", "true"], {
      env,
    });
    expect(exec.code, exec.stdout).toBe(0);
    dispatched.push(JSON.parse(exec.stdout).dispatched.dispatchId);
    const waited = await runCli(["wait", "plain", "--json"], { env, timeoutMs: 60_000 });
    expect(JSON.parse(waited.stdout).records[0]).toMatchObject({ status: "ok", account: null });
  }, 60_000);
});

function recordNamed(home: string, name: string, id?: string): Record<string, unknown> {
  const dir = path.join(home, "runs", "default", "dispatches", name);
  id ??= fs.readFileSync(path.join(dir, "latest"), "utf8").trim();
  return JSON.parse(fs.readFileSync(path.join(dir, id, "record.json"), "utf8")) as Record<string, unknown>;
}
