import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { readJson } from "../helpers/folders.js";
import { isAlive, killPid, waitForPause } from "../helpers/processes.js";
import { waitFor, waitForFile, waitForJson } from "../helpers/wait.js";
import { dispatchFake, homeFor, jsonOf, type Trial, trial, useFaultKit, waitGone } from "./kit.js";

// Row 1: the supervisor SIGKILLed at each phase of its life (frozen there by CATHERD_TEST_ONLY_PAUSE_AT), then
// readers: the dispatch is recorded exactly once. An agent named in proc.json is adopted by a new
// supervisor at the first read (row 13 tests adoption itself); one that is not is an orphan, stopped only
// by `cancel`, only if its pid and start time read back exactly.

useFaultKit();

interface Phase {
  phase: string;
  steps: (marker: string) => Record<string, unknown>[];
  extra?: string[];
  /** Whether the agent is still alive once the supervisor is killed there. */
  agentAlive: boolean;
  /** Whether the first reader has it adopted (the agent is named in proc.json). */
  adopted?: boolean;
  /** What the first reader finds, and the record at the end. */
  state: string;
  record: { status: string; reason: string };
}

const hang = (marker: string) => [{ out: "working" }, { touch: marker }, { hang: true }];

const PHASES: Phase[] = [
  {
    // supervisor.json written, the rest of the supervisor not loaded yet (supervisor/supervise.ts)
    phase: "claimed",
    steps: hang,
    agentAlive: false,
    state: "lost",
    record: { status: "lost", reason: "lost" },
  },
  {
    phase: "before-spawn",
    steps: hang,
    agentAlive: false,
    state: "lost",
    record: { status: "lost", reason: "lost" },
  },
  {
    phase: "after-spawn",
    steps: hang,
    agentAlive: true,
    state: "orphaned",
    record: { status: "cancelled", reason: "cancelled" },
  },
  {
    phase: "watching",
    steps: hang,
    agentAlive: true,
    adopted: true,
    state: "running",
    record: { status: "cancelled", reason: "cancelled" },
  },
  {
    // The agent ignores SIGTERM, so it is alive when the supervisor dies between SIGTERM and SIGKILL; the
    // adopter finds it quiet past its idle time as well, and stops it again, to the end. The idle limit
    // outlasts the fake agent's start on a loaded machine: a SIGTERM before it ignores SIGTERM ends it.
    phase: "term-sent",
    steps: (marker) => [{ ignoreTerm: true }, { out: "working" }, { touch: marker }, { hang: true }],
    extra: ["--idle", "5s"],
    agentAlive: true,
    adopted: true,
    state: "running",
    record: { status: "timeout", reason: "idle-timeout" },
  },
  {
    phase: "exited",
    steps: (marker) => [{ out: "done" }, { touch: marker }, { exit: 0 }],
    agentAlive: false,
    state: "exited",
    record: { status: "ok", reason: "exited" },
  },
];

/** Ten readers at once; every one answers, and among them they write at most one record. */
async function raceReaders(env: NodeJS.ProcessEnv, name: string) {
  const verbs = [["status"], ["show", name], ["status", "--all"], ["logs", name], ["show", name]];
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      runCli([...(verbs[i % verbs.length] ?? ["status"]), "--json"], { env }),
    ),
  );
  for (const r of results) expect(r.code, r.stderr).toBe(0);
}

function recordFiles(dir: string): string[] {
  return fs.readdirSync(dir).filter((f) => f.startsWith("record.json") || f.startsWith(".record.json"));
}

async function killedAt(t: Trial, p: Phase) {
  const { env } = homeFor(t, { CATHERD_TEST_ONLY_PAUSE_AT: p.phase });
  const marker = path.join(t.dir(), "agent-started");
  const name = `killed-${p.phase}`;
  const d = await dispatchFake(t, env, p.steps(marker), ["--name", name, ...(p.extra ?? [])]);
  await waitForPause(d.dir, p.phase, 20_000);
  if (p.agentAlive) await waitForFile(marker);
  const proc = fs.existsSync(path.join(d.dir, "proc.json")) ? readJson(path.join(d.dir, "proc.json")) : null;
  if (proc !== null) t.pid(proc.pid as number);
  killPid(d.supervisorPid);
  await waitGone(d.supervisorPid);

  const readerEnv = { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "" };
  const status = jsonOf(await runCli(["status", "--json"], { env: readerEnv })) as {
    dispatches: { state: string; status: string | null }[];
  };
  const first = status.dispatches[0];
  const seen = first?.state === "recorded" ? `recorded ${first.status}` : first?.state;
  if (p.adopted === true) {
    // Adopted at this read: running again (or, for a stop already due, stopping or recorded by now).
    expect(["running", "stopping", `recorded ${p.record.status}`]).toContain(seen);
    const agentPid = Number(fs.readFileSync(marker, "utf8"));
    const adopter = readJson(path.join(d.dir, "supervisor.json"));
    t.pid(adopter.pid as number);
    expect(adopter).toMatchObject({ adoptions: 1 });
    if (p.record.status === "cancelled") {
      expect(isAlive(agentPid)).toBe(true);
      await raceReaders(readerEnv, name);
      expect(recordFiles(d.dir)).toEqual([]);
      const cancelled = await runCli(["cancel", name, "--wait", "--json"], {
        env: readerEnv,
        timeoutMs: 30_000,
      });
      expect(cancelled.code, cancelled.stderr).toBe(0);
    }
    await waitForJson(path.join(d.dir, "record.json"), 30_000);
    await waitGone(agentPid);
  } else if (p.agentAlive) {
    // A reader never signals: the agent is still there, and it is an orphan until someone cancels it.
    const agentPid = Number(fs.readFileSync(marker, "utf8"));
    expect(isAlive(agentPid)).toBe(true);
    await raceReaders(readerEnv, name);
    expect(recordFiles(d.dir)).toEqual([]);
    const cancelled = await runCli(["cancel", name, "--json"], { env: readerEnv, timeoutMs: 30_000 });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    await waitGone(agentPid);
  }
  await raceReaders(readerEnv, name);
  expect(recordFiles(d.dir)).toEqual(["record.json"]);
  expect(readJson(path.join(d.dir, "record.json"))).toMatchObject(p.record);
  expect(readJson(path.join(d.dir, "exit.json"))).toMatchObject({ adoptions: p.adopted === true ? 1 : 0 });
  return d;
}

describe("row 1: the supervisor SIGKILLed at each phase", () => {
  for (const p of PHASES) {
    it(`records a dispatch whose supervisor died ${p.phase} exactly once, and leaves nothing running`, async () => {
      const t = trial(`1 supervisor SIGKILLed ${p.phase}`);
      await killedAt(t, p);
      t.pass();
    });
  }

  it("records lost once when the agent ends by itself after its supervisor was killed mid-run", async () => {
    const t = trial("1 supervisor SIGKILLed running, agent then exits");
    const { env } = homeFor(t, { CATHERD_TEST_ONLY_PAUSE_AT: "watching" });
    const go = path.join(t.dir(), "go");
    const d = await dispatchFake(
      t,
      env,
      [{ out: "x" }, { touch: go }, { sleep: 300 }, { exit: 0 }],
      ["--name", "ends"],
    );
    await waitForPause(d.dir, "watching");
    killPid(d.supervisorPid);
    const agentPid = Number(await waitForFile(go));
    await waitGone(agentPid);
    await raceReaders(env, "ends");
    expect(recordFiles(d.dir)).toEqual(["record.json"]);
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({
      status: "lost",
      error: { code: "E_SUPERVISOR_LOST" },
    });
    t.pass();
  });

  it("adopts, without running the agent twice, when a supervisor is started again on a killed one's folder", async () => {
    const t = trial("1 supervisor SIGKILLed running, supervise again");
    const { env } = homeFor(t, { CATHERD_TEST_ONLY_PAUSE_AT: "watching" });
    const d = await dispatchFake(t, env, [{ out: "once" }, { hang: true }], ["--name", "again"]);
    await waitForPause(d.dir, "watching");
    const proc = await waitForJson<{ pid: number }>(path.join(d.dir, "proc.json"));
    t.pid(proc.pid);
    killPid(d.supervisorPid);
    await waitGone(d.supervisorPid);
    const readerEnv = { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "" };
    // `catherd supervise` adopts the dispatch and supervises it to its end.
    const again = runCli(["supervise", d.dir], { env: readerEnv, timeoutMs: 60_000 });
    await waitFor("the adoption", () =>
      fs.readFileSync(path.join(d.dir, "supervisor.log"), "utf8").includes('"event":"adopted"')
        ? true
        : undefined,
    );
    t.pid((readJson(path.join(d.dir, "supervisor.json")) as { pid: number }).pid);
    expect(fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8")).toBe("once\n");
    expect(isAlive(proc.pid)).toBe(true);
    await runCli(["cancel", "again"], { env: readerEnv });
    expect((await again).code).toBe(0);
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({ status: "cancelled" });
    expect(isAlive(proc.pid)).toBe(false);
    const log = fs.readFileSync(path.join(d.dir, "supervisor.log"), "utf8");
    expect(log.match(/"event":"spawned"/g)).toHaveLength(1);
    t.pass();
  });
});
