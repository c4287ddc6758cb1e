import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/infra/clock.js";
import { startTimeOf } from "../../src/infra/process-identity.js";
import { stopDispatch, sweep } from "../../src/infra/stop.js";
import { runCli } from "../helpers/cli.js";
import { fakeAgentFolder, readJson, startSupervisor } from "../helpers/folders.js";
import { isAlive } from "../helpers/processes.js";
import { waitFor, waitForFile, waitForJson } from "../helpers/wait.js";
import { handDispatch, homeFor, procState, startSleeper, trial, useFaultKit } from "./kit.js";

// Row 3: PID reuse. A pid that reads back with another start time is a different process: catherd never
// signals it — not `cancel` of an "orphan", not a reader, not the sweep, not a supervisor.

useFaultKit();

/** A live unrelated process, and a start time that is not its own. */
function impostor(t: Parameters<typeof startSleeper>[0]) {
  const pid = startSleeper(t);
  const real = startTimeOf(pid);
  expect(real).not.toBeNull();
  return { pid, real: real as string, other: String(Number(real) - 7) };
}

/** The sleeper is alive, running or sleeping (never stopped), and still the same process. */
function untouched(pid: number, real: string) {
  expect(isAlive(pid)).toBe(true);
  expect(procState(pid)).toMatch(/^[RS]$/);
  expect(startTimeOf(pid)).toBe(real);
}

describe("row 3: pid reuse", () => {
  it("never signals a live process that proc.json and supervisor.json name with another start time", async () => {
    const t = trial("3 proc.json names a reused pid: readers and cancel");
    const { home, env } = homeFor(t);
    const agent = impostor(t);
    const supervisor = impostor(t);
    const { dir } = handDispatch(home, "reused", {
      "supervisor.json": {
        schema: 1,
        pid: supervisor.pid,
        startTime: supervisor.other,
        startedAt: new Date().toISOString(),
      },
      "proc.json": {
        schema: 1,
        pid: agent.pid,
        pgid: agent.pid,
        startTime: agent.other,
        startedAt: new Date().toISOString(),
        argv0: "/bin/true",
      },
    });
    for (const args of [
      ["status"],
      ["show", "reused"],
      ["logs", "reused"],
      ["wait", "reused", "--timeout", "2s"],
      ["result", "reused"],
    ]) {
      const r = await runCli([...args, "--json"], { env });
      expect(r.code, `${args.join(" ")}: ${r.stdout}${r.stderr}`).toBeLessThanOrEqual(1);
      untouched(agent.pid, agent.real);
      untouched(supervisor.pid, supervisor.real);
    }
    // The first reader found it lost (both named processes are gone: their pids now belong to others).
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({ status: "lost" });
    const cancelled = await runCli(["cancel", "reused", "--json"], { env });
    expect(cancelled.code).toBe(0);
    untouched(agent.pid, agent.real);
    untouched(supervisor.pid, supervisor.real);
    t.pass();
  });

  it("cancel of an orphan whose agent pid was reused stops nothing and records it", async () => {
    const t = trial("3 proc.json names a reused pid: cancel before any reader");
    const { home, env } = homeFor(t);
    const agent = impostor(t);
    const { dir } = handDispatch(home, "orphan", {
      "supervisor.json": { schema: 1, pid: 999_999, startTime: "1", startedAt: new Date().toISOString() },
      "proc.json": {
        schema: 1,
        pid: agent.pid,
        pgid: agent.pid,
        startTime: agent.other,
        startedAt: new Date().toISOString(),
        argv0: "x",
      },
    });
    const cancelled = await runCli(["cancel", "orphan", "--json"], { env });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    untouched(agent.pid, agent.real);
    expect(fs.existsSync(path.join(dir, "record.json"))).toBe(true);
    t.pass();
  });

  it("the stop sequence and the sweep never signal a process whose start time differs", async () => {
    const t = trial("3 sweep and stop given a reused pid");
    const victim = impostor(t);
    expect(sweep("no-such-dispatch", [{ pid: victim.pid, startTime: victim.other }])).toBe(0);
    const report = await stopDispatch(
      {
        dispatchId: "no-such-dispatch",
        pgid: null,
        leader: { pid: victim.pid, startTime: victim.other },
        killGraceMs: 50,
      },
      systemClock,
    );
    expect(report).toEqual({ term: false, kill: false, swept: 0 });
    untouched(victim.pid, victim.real);
    t.pass();
  });

  it("a supervisor whose proc.json is rewritten mid-run still stops its own agent tree, and only it", async () => {
    const t = trial("3 proc.json rewritten mid-run to name another process");
    const victim = impostor(t);
    const parent = t.dir();
    const pidFile = path.join(parent, "escaped");
    const { dir, id } = fakeAgentFolder(
      { steps: [] },
      {
        cmd: "/bin/sh",
        // A child without our variable, in its own session: only the parent chain finds it.
        args: ["-c", `env -i setsid sh -c 'trap "" TERM; echo $$ > ${pidFile}; exec sleep 1000' & wait`],
        idleMs: 800,
      },
      parent,
    );
    t.dispatch(id);
    const run = startSupervisor(dir);
    t.pid(run.child.pid);
    const proc = await waitForJson<Record<string, unknown>>(path.join(dir, "proc.json"));
    const escaped = Number(await waitForFile(pidFile));
    t.pid(escaped);
    fs.writeFileSync(
      path.join(dir, "proc.json"),
      JSON.stringify({ ...proc, pid: victim.pid, pgid: victim.pid, startTime: victim.other }),
    );
    await run.done;
    untouched(victim.pid, victim.real);
    await waitFor("the escaped child to be gone", () => (isAlive(escaped) ? undefined : true), 5000);
    expect(readJson(path.join(dir, "exit.json"))).toMatchObject({ reason: "idle-timeout", pid: proc.pid });
    t.pass();
  });
});
