import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, dispatchedOf, runCli } from "../helpers/cli.js";
import { FAKE_AGENT, readJson } from "../helpers/folders.js";
import { isAlive, killPid, waitForPause } from "../helpers/processes.js";
import { waitFor, waitForFile, waitForJson } from "../helpers/wait.js";
import {
  type Dispatched,
  dispatchFake,
  heavy,
  homeFor,
  jsonOf,
  type Trial,
  trial,
  useFaultKit,
  waitGone,
} from "./kit.js";

// Row 12: re-adoption (specs/supervisor.md, "Adoption"). A supervisor SIGKILLed while its agent runs is
// replaced by the next reader; the new one enforces the same limits from the same clocks, rebuilds the
// same stream state, and ends the dispatch as the first would have.

useFaultKit();

/** The target: a new supervisor within a second of the reader. Measured and noted per trial. */
const ADOPTION_TARGET_MS = 1000;
/**
 * The bound asserted. The latency is two node start-ups (the reader, the adopter), which a shared machine
 * at a load of 30 stretches to several seconds; what the bound must catch is a take-over that waits for
 * the dead supervisor's lock to go stale (SUPERVISOR_LOCK_STALE_MS, 30 s).
 */
const ADOPTION_BOUND_MS = 15_000;

const codex = {
  thread: { type: "thread.started", thread_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" },
  open: (id: string, command: string) => ({
    type: "item.started",
    item: { id, type: "command_execution", command, status: "in_progress" },
  }),
  close: (id: string, command: string) => ({
    type: "item.completed",
    item: { id, type: "command_execution", command, exit_code: 0, status: "completed" },
  }),
  retry: { type: "error", message: "Reconnecting... 1/5 (stream disconnected before completion)" },
  done: {
    type: "turn.completed",
    usage: { input_tokens: 1200, cached_input_tokens: 200, output_tokens: 340 },
  },
};
const out = (event: unknown) => ({ out: JSON.stringify(event) });

/** Kills the paused supervisor of `d` and waits until it is gone. */
async function killSupervisor(t: Trial, d: Dispatched) {
  await waitForPause(d.dir, "watching", 20_000);
  const proc = await waitForJson<{ pid: number }>(path.join(d.dir, "proc.json"));
  t.pid(proc.pid);
  killPid(d.supervisorPid);
  await waitGone(d.supervisorPid);
  return proc.pid;
}

/** Runs a reader and measures how long after its start the new supervisor named itself. */
async function readAndAdopt(t: Trial, env: NodeJS.ProcessEnv, dir: string, args: string[]) {
  const startedAt = Date.now();
  const result = await runCli(args, { env, timeoutMs: 30_000 });
  expect(result.code, result.stderr).toBe(0);
  const sup = readJson(path.join(dir, "supervisor.json")) as {
    pid: number;
    startedAt: string;
    adoptions: number;
  };
  t.pid(sup.pid);
  const latencyMs = Date.parse(sup.startedAt) - startedAt;
  t.note(`adopted ${latencyMs} ms after the reader started (target ${ADOPTION_TARGET_MS} ms)`);
  expect(latencyMs).toBeLessThan(ADOPTION_BOUND_MS);
  return { result, sup, latencyMs };
}

/** The time of one event in supervisor.log, ms since the epoch. */
function logged(dir: string, event: string): number {
  const line = fs
    .readFileSync(path.join(dir, "supervisor.log"), "utf8")
    .split("\n")
    .find((l) => l.includes(`"event":"${event}"`));
  expect(line, `supervisor.log has ${event}`).toBeDefined();
  return Date.parse((JSON.parse(line as string) as { at: string }).at);
}

/** `catherd dispatch --backend codex` of the fake agent speaking Codex's stream. */
async function dispatchCodex(
  t: Trial,
  env: NodeJS.ProcessEnv,
  name: string,
  steps: Record<string, unknown>[],
  extra: string[],
): Promise<Dispatched> {
  const scenario = path.join(t.dir(), "scenario.json");
  fs.writeFileSync(scenario, JSON.stringify({ steps }));
  const result: CliResult = await runCli(
    [
      "dispatch",
      "--backend",
      "codex",
      "--bin",
      FAKE_AGENT,
      "--name",
      name,
      "--brief",
      "go",
      "--json",
      ...extra,
    ],
    { env: { ...env, FAKE_AGENT_SCENARIO_FILE: scenario }, timeoutMs: 60_000 },
  );
  expect(result.code, result.stderr).toBe(0);
  const d = dispatchedOf(result);
  t.dispatch(d.dispatchId);
  t.pid(d.supervisorPid);
  return d;
}

describe("row 13: a supervisor that dies is replaced", () => {
  it("adopts at the next status and ends a hung agent on its idle time, counted from its last line", async () => {
    const t = trial("13a supervisor SIGKILLed mid-run, hung agent");
    await heavy(t);
    const { env } = homeFor(t, { CATHERD_TEST_ONLY_PAUSE_AT: "watching" });
    const quiet = path.join(t.dir(), "quiet");
    const d = await dispatchFake(
      t,
      env,
      [{ out: "working" }, { touch: quiet }, { hang: true }],
      ["--name", "hung", "--idle", "4s"],
    );
    const agent = await killSupervisor(t, d);
    await waitForFile(quiet);
    const lastLineAt = fs.statSync(path.join(d.dir, "events.jsonl")).mtimeMs;
    // Let the agent be quiet for a while unwatched: the adopter must count that time.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const readerEnv = { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "" };
    const { result, sup } = await readAndAdopt(t, readerEnv, d.dir, ["status", "--json"]);
    expect((jsonOf(result).dispatches as { state: string }[])[0]?.state).toBe("running");
    expect(sup.adoptions).toBe(1);
    expect(sup.pid).not.toBe(d.supervisorPid);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "timeout", reason: "idle-timeout", exitCode: null });
    expect(isAlive(agent)).toBe(false);
    await waitGone(sup.pid);
    const quietFor = logged(d.dir, "decided") - lastLineAt;
    t.note(`idle decided ${Math.round(quietFor)} ms after the last line (idle 4000 ms)`);
    expect(quietFor).toBeGreaterThanOrEqual(4000 - 20);
    // Counted from the adoption it would have come 4 s after it, at the earliest.
    expect(logged(d.dir, "decided")).toBeLessThan(Date.parse(sup.startedAt) + 4000);
    expect(readJson(path.join(d.dir, "exit.json"))).toMatchObject({ adoptions: 1, reason: "idle-timeout" });
    t.pass();
  });

  it("enforces the wall from the original start on an agent that keeps working", async () => {
    const t = trial("13b supervisor SIGKILLed mid-run, wall from the original start");
    await heavy(t);
    const { env } = homeFor(t, { CATHERD_TEST_ONLY_PAUSE_AT: "watching" });
    const d = await dispatchFake(
      t,
      env,
      [{ chatter: { lines: 100_000, everyMs: 100 } }],
      ["--name", "busy", "--wall", "6s"],
    );
    await killSupervisor(t, d);
    const { sup } = await readAndAdopt(t, { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "" }, d.dir, [
      "show",
      "busy",
      "--json",
    ]);
    await waitForJson(path.join(d.dir, "record.json"), 30_000);
    await waitGone(sup.pid);
    const exit = readJson(path.join(d.dir, "exit.json")) as { reason: string; startedAt: string };
    expect(exit).toMatchObject({ reason: "wall-timeout", adoptions: 1 });
    const after = logged(d.dir, "decided") - Date.parse(exit.startedAt);
    t.note(`wall decided ${after} ms after the first supervisor started (wall 6000 ms)`);
    expect(after).toBeGreaterThanOrEqual(6000 - 50);
    expect(after).toBeLessThan(6000 + 2000);
    t.pass();
  });

  it("rebuilds the same stream state as an unbroken run: open calls, retries, thread, tokens", async () => {
    const t = trial("13c adopted stream state equals an unbroken run's");
    await heavy(t);
    const steps = (ready: string, go: string) => [
      out(codex.thread),
      out(codex.open("item_1", "ls")),
      out(codex.close("item_1", "ls")),
      out(codex.retry),
      out(codex.open("item_2", "npm test")),
      { touch: ready },
      { waitFor: go },
      out(codex.close("item_2", "npm test")),
      out(codex.open("item_3", "git diff")),
      out(codex.done),
      { hang: true },
    ];
    const run = async (name: string, adopt: boolean) => {
      const { env } = homeFor(t, adopt ? { CATHERD_TEST_ONLY_PAUSE_AT: "watching" } : {});
      const ready = path.join(t.dir(), "ready");
      const go = path.join(t.dir(), "go");
      if (!adopt) fs.writeFileSync(go, "");
      const d = await dispatchCodex(t, env, name, steps(ready, go), ["--wall", "8s"]);
      if (adopt) {
        await killSupervisor(t, d);
        await waitForFile(ready);
        await readAndAdopt(t, { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "" }, d.dir, ["status", "--json"]);
        fs.writeFileSync(go, "");
      }
      const record = await waitForJson(path.join(d.dir, "record.json"), 40_000);
      await waitGone((readJson(path.join(d.dir, "supervisor.json")) as { pid: number }).pid);
      return { exit: readJson(path.join(d.dir, "exit.json")), record };
    };
    const [unbroken, adopted] = await Promise.all([run("unbroken", false), run("adopted", true)]);
    const stream = (r: typeof unbroken) => ({
      reason: r.exit.reason,
      sawFinal: r.exit.sawFinal,
      thread: r.exit.thread,
      retries: r.exit.retries,
      open: (r.exit.openToolCalls as { id: string; label: string }[]).map(({ id, label }) => ({ id, label })),
      status: r.record.status,
      tokens: r.record.tokens,
    });
    expect(stream(unbroken)).toMatchObject({ reason: "wall-timeout", retries: 1, open: [{ id: "item_3" }] });
    expect(stream(adopted)).toEqual(stream(unbroken));
    expect(adopted.exit.adoptions).toBe(1);
    expect(unbroken.exit.adoptions).toBe(0);
    t.pass();
  });

  it("lets a working agent run to completion, and wait returns its record", async () => {
    const t = trial("13d supervisor SIGKILLed mid-run, agent then finishes");
    await heavy(t);
    const { env } = homeFor(t, { CATHERD_TEST_ONLY_PAUSE_AT: "watching" });
    const ready = path.join(t.dir(), "ready");
    const go = path.join(t.dir(), "go");
    const d = await dispatchCodex(
      t,
      env,
      "finisher",
      [
        out(codex.thread),
        out(codex.open("item_1", "make")),
        { touch: ready },
        { waitFor: go },
        out(codex.close("item_1", "make")),
        out(codex.done),
        { exit: 0 },
      ],
      [],
    );
    const agent = await killSupervisor(t, d);
    await waitForFile(ready);
    const readerEnv = { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "" };
    const waiting = runCli(["wait", "finisher", "--json"], { env: readerEnv, timeoutMs: 60_000 });
    const sup = await waitFor(
      "the adopter",
      () => {
        const s = readJson(path.join(d.dir, "supervisor.json")) as { pid: number; adoptions: number };
        return s.adoptions === 1 ? s : undefined;
      },
      20_000,
    );
    t.pid(sup.pid);
    fs.writeFileSync(go, "");
    const waited = await waiting;
    expect(waited.code, waited.stderr).toBe(0);
    const records = jsonOf(waited).records as Record<string, unknown>[];
    expect(records[0]).toMatchObject({
      status: "ok",
      reason: "exited",
      exitCode: null,
      tokens: { input: 1200, cached: 200, output: 340 },
    });
    expect(isAlive(agent)).toBe(false);
    // The record comes before the adopter's last steps (its lock, the promoter): it exits right after.
    await waitGone(sup.pid, 30_000);
    t.pass();
  });

  it("lets one supervisor adopt when ten readers race", async () => {
    const t = trial("13e ten readers race to adopt");
    await heavy(t);
    const { env } = homeFor(t, { CATHERD_TEST_ONLY_PAUSE_AT: "watching" });
    const d = await dispatchFake(t, env, [{ out: "x" }, { hang: true }], ["--name", "raced"]);
    await killSupervisor(t, d);
    const readerEnv = { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "" };
    const verbs = [
      ["status"],
      ["show", "raced"],
      ["result", "raced"],
      ["logs", "raced"],
      ["status", "--all"],
    ];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        runCli([...(verbs[i % verbs.length] ?? ["status"]), "--json"], { env: readerEnv, timeoutMs: 30_000 }),
      ),
    );
    // result exits 1 (E_NOT_RECORDED) on a running dispatch; every other reader 0.
    for (const r of results) expect([0, 1], r.stderr).toContain(r.code);
    const log = fs.readFileSync(path.join(d.dir, "supervisor.log"), "utf8");
    expect(log.match(/"event":"adopted"/g)).toHaveLength(1);
    const sup = readJson(path.join(d.dir, "supervisor.json")) as { pid: number; adoptions: number };
    t.pid(sup.pid);
    expect(sup.adoptions).toBe(1);
    // The losers bowed out: only the adopter supervises the folder.
    await waitFor("the losers gone", () => (supervisorsOf(d.dir).length === 1 ? true : undefined), 20_000);
    expect(supervisorsOf(d.dir)).toEqual([sup.pid]);
    const cancelled = await runCli(["cancel", "raced", "--wait", "--json"], {
      env: readerEnv,
      timeoutMs: 30_000,
    });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({ status: "cancelled" });
    expect(readJson(path.join(d.dir, "exit.json"))).toMatchObject({ adoptions: 1, reason: "cancelled" });
    // `cancel --wait` returns at the record; the adopter ends after it (its lock, its after-record work).
    await waitFor("the adopter gone", () => (isAlive(sup.pid) ? undefined : true), 20_000);
    t.pass();
  });

  it("adopts again when the adopter is SIGKILLed too", async () => {
    const t = trial("13f adopter SIGKILLed too");
    await heavy(t);
    const { env } = homeFor(t, { CATHERD_TEST_ONLY_PAUSE_AT: "watching" });
    const d = await dispatchFake(t, env, [{ out: "x" }, { hang: true }], ["--name", "twice"]);
    const agent = await killSupervisor(t, d);
    // The first adopter freezes once it has taken over; it is killed there.
    await runCli(["status", "--json"], {
      env: { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "adopted" },
      timeoutMs: 30_000,
    });
    const paused = await waitForPause(d.dir, "adopted", 20_000);
    t.pid(paused);
    expect(readJson(path.join(d.dir, "supervisor.json"))).toMatchObject({ pid: paused, adoptions: 1 });
    killPid(paused);
    await waitGone(paused);
    const readerEnv = { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "" };
    const { sup } = await readAndAdopt(t, readerEnv, d.dir, ["status", "--json"]);
    expect(sup.adoptions).toBe(2);
    expect(isAlive(agent)).toBe(true);
    const cancelled = await runCli(["cancel", "twice", "--wait", "--json"], {
      env: readerEnv,
      timeoutMs: 30_000,
    });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(readJson(path.join(d.dir, "exit.json"))).toMatchObject({ adoptions: 2, reason: "cancelled" });
    expect(isAlive(agent)).toBe(false);
    const shown = await runCli(["show", "twice"], { env: readerEnv });
    expect(shown.stdout).toContain("adopted 2 times");
    t.pass();
  });
});

/** Live supervisor processes whose argv names `dir`. */
function supervisorsOf(dir: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (argv.some((a) => a.endsWith("supervisor.js")) && argv.includes(dir) && isAlive(Number(entry))) {
        found.push(Number(entry));
      }
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
