import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  type FakeScenario,
  fakeAgentFolder,
  readJson,
  startSupervisor,
  supervise,
} from "../helpers/folders.js";
import { isAlive } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait.js";
import { procState, type Trial, trial, useFaultKit } from "./kit.js";

// Row 2: agents that fight back. Each runs under a real supervisor (dist/bin/supervisor.js); afterwards
// nothing it started may be running, and exit.json says how it was stopped.

useFaultKit();

function folder(t: Trial, scenario: FakeScenario, spec: Record<string, unknown> = {}) {
  const made = fakeAgentFolder(scenario, spec, t.dir());
  t.dispatch(made.id);
  return made;
}

function pidsOf(file: string): number[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map(Number);
}

/**
 * Supervises `dir` and cancels it once `ready()` says the agent reached the state under test: however long
 * the agent took to start, it is stopped in that state (a limit such as idleMs would race its start-up).
 */
async function cancelWhen(dir: string, what: string, ready: () => boolean) {
  const run = startSupervisor(dir);
  await waitFor(what, () => (ready() ? true : undefined), 30_000);
  fs.writeFileSync(path.join(dir, "cancel"), new Date().toISOString());
  expect(await run.done).toEqual({ code: 0, signal: null });
}

const exitOf = (dir: string) => readJson(path.join(dir, "exit.json"));
const recordOf = (dir: string) => readJson(path.join(dir, "record.json"));

describe("row 2: agents that fight back", () => {
  it("SIGKILLs an agent that ignores SIGTERM once the kill grace has passed", async () => {
    const t = trial("2 agent ignores SIGTERM");
    const ready = path.join(t.dir(), "ready");
    const { dir } = folder(t, { steps: [{ ignoreTerm: true }, { touch: ready }, { hang: true }] });
    await cancelWhen(dir, "the agent to ignore SIGTERM", () => fs.existsSync(ready));
    expect(exitOf(dir)).toMatchObject({
      reason: "cancelled",
      signal: "SIGKILL",
      stop: { term: true, kill: true },
    });
    expect(recordOf(dir)).toMatchObject({ status: "cancelled" });
    t.pass();
  });

  it("kills an agent that SIGSTOPped itself: a stopped process never acts on SIGTERM", async () => {
    const t = trial("2 agent SIGSTOPped");
    const pidFile = path.join(t.dir(), "pid");
    const { dir } = folder(t, { steps: [{ touch: pidFile }, { stop: true }, { hang: true }] });
    await cancelWhen(dir, "the agent to stop itself", () => {
      const pid = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, "utf8")) : 0;
      return pid > 0 && procState(pid) === "T";
    });
    const exit = exitOf(dir);
    expect(exit).toMatchObject({
      reason: "cancelled",
      signal: "SIGKILL",
      stop: { term: true, kill: true },
    });
    expect(isAlive(exit.pid as number)).toBe(false);
    t.pass();
  });

  it("sweeps setsid grandchildren that ignore SIGTERM and were reparented to init", async () => {
    const t = trial("2 setsid grandchildren ignore SIGTERM");
    const pidFile = path.join(t.dir(), "pids");
    const escapee = { escape: { ignoreTerm: true } };
    const { dir } = folder(t, {
      pidFile,
      steps: [escapee, escapee, escapee, { out: "left them" }, { exit: 0 }],
    });
    expect((await supervise(dir)).code).toBe(0);
    const pids = pidsOf(pidFile);
    expect(pids).toHaveLength(3);
    expect(pids.filter(isAlive)).toEqual([]);
    expect(exitOf(dir)).toMatchObject({ reason: "exited", code: 0 });
    expect((exitOf(dir).stop as { swept: number }).swept).toBeGreaterThanOrEqual(3);
    expect(recordOf(dir)).toMatchObject({ status: "ok" });
    t.pass();
  });

  it("stops 200 children in the group and 50 escaped ones that ignore SIGTERM", async () => {
    const t = trial("2 fan-out of 200 (+50 setsid)");
    const ready = path.join(t.dir(), "ready");
    const { dir } = folder(t, {
      steps: [
        { fanout: 200, trapTerm: true },
        { fanout: 50, trapTerm: true, setsid: true },
        { touch: ready },
        { hang: true },
      ],
    });
    await cancelWhen(dir, "the 250 children", () => fs.existsSync(ready));
    const exit = exitOf(dir);
    expect(exit).toMatchObject({ reason: "cancelled", stop: { term: true, kill: true } });
    // The 50 setsid ones left the group: only the sweep reaches them. Whether all 250 are gone is the
    // kit's check (every process carrying the dispatch's CATHERD_DISPATCH, counted as left running).
    expect((exit.stop as { swept: number }).swept).toBeGreaterThanOrEqual(50);
    t.pass();
  });

  it("watches an agent that closed its stdout and keeps running, and stops it at idle", async () => {
    const t = trial("2 agent closes stdout, keeps running");
    // sh prints at once: the node fake agent's start-up could outlast idleMs on a loaded machine.
    const { dir } = folder(
      t,
      { steps: [] },
      { cmd: "/bin/sh", args: ["-c", "echo 'before close'; exec >&-; exec sleep 1000"], idleMs: 400 },
    );
    expect((await supervise(dir)).code).toBe(0);
    expect(exitOf(dir)).toMatchObject({ reason: "idle-timeout", stop: { term: true } });
    expect(fs.readFileSync(path.join(dir, "events.jsonl"), "utf8")).toBe("before close\n");
    t.pass();
  });

  it("ends promptly when the agent exits 0 while a child still holds events.jsonl open, and stops the child", async () => {
    const t = trial("2 exit 0 while a child holds events.jsonl");
    const pidFile = path.join(t.dir(), "pids");
    const { dir } = folder(t, { pidFile, steps: [{ holdStdout: true }, { out: "done" }, { exit: 0 }] });
    // A supervisor that waited for the child to let go of events.jsonl would run until idle (10 min):
    // `supervise` SIGKILLs it at its 20 s deadline instead, and the exit it reports is no longer 0.
    expect(await supervise(dir, 20_000)).toEqual({ code: 0, signal: null });
    expect(pidsOf(pidFile).filter(isAlive)).toEqual([]);
    expect(exitOf(dir)).toMatchObject({ reason: "exited", code: 0, stop: { term: true } });
    expect(recordOf(dir)).toMatchObject({ status: "ok" });
    t.pass();
  });

  it("records cancelled when the agent sends SIGTERM to its own supervisor, and stops the agent", async () => {
    const t = trial("2 agent signals its supervisor");
    const pidFile = path.join(t.dir(), "pids");
    const { dir } = folder(t, {
      pidFile,
      steps: [{ background: true }, { out: "x" }, { signalParent: "SIGTERM" }, { hang: true }],
    });
    expect((await supervise(dir)).code).toBe(0);
    expect(exitOf(dir)).toMatchObject({ reason: "cancelled", error: { code: "E_SUPERVISOR_SIGNALLED" } });
    expect(pidsOf(pidFile).filter(isAlive)).toEqual([]);
    t.pass();
  });

  it("stops a child that scrubbed its environment and called setsid, by the parent chain", async () => {
    const t = trial("2 child with env -i and setsid");
    const pidFile = path.join(t.dir(), "pid");
    const { dir } = folder(
      t,
      { steps: [{ out: "x" }, { hang: true }] },
      {
        cmd: "/bin/sh",
        args: [
          "-c",
          `env -i setsid sh -c 'trap "" TERM; echo $$ > ${pidFile}; exec sleep 1000' & echo started; wait`,
        ],
        idleMs: 500,
      },
    );
    expect((await supervise(dir)).code).toBe(0);
    const pids = pidsOf(pidFile);
    expect(pids).toHaveLength(1);
    t.pid(pids[0]);
    expect(pids.filter(isAlive)).toEqual([]);
    expect((exitOf(dir).stop as { swept: number }).swept).toBeGreaterThanOrEqual(1);
    t.pass();
  });
});
