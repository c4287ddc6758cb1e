import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { promoteRun } from "../../src/dispatch/queue/promote.js";
import { doDutiesIn } from "../../src/dispatch/reader.js";
import { systemClock } from "../../src/infra/clock.js";
import { runPaths } from "../../src/infra/paths.js";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { killPid, reapDispatch } from "../helpers/processes.js";
import { agent, dispatch, logLines, parsed, type Queued, recordOf } from "../helpers/queue.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// The queue with real processes (specs/dispatch.md, "The queue"); the 50-dispatch race is in
// test/faults/queue.fault.ts.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

describe("dispatch --queue, with real processes", () => {
  it("admits a blocked dispatch queued — a whole folder and queued.json — and starts it when the slot frees", async () => {
    const { env } = isolatedHome();
    const log = path.join(tempDir(), "agents.log");
    const gate = path.join(tempDir(), "go");
    const first = parsed(
      await dispatch(env, "first", agent(log, "first", `while [ ! -e '${gate}' ]; do sleep 0.05; done`), [
        "--max-parallel",
        "1",
        "--queue",
      ]),
      dispatched,
    );
    expect(first.queued).toBe(false);
    const second = parsed(
      await dispatch(env, "second", agent(log, "second", "true"), ["--queue", "--brief", "hi"]),
      dispatched,
    );
    expect(second).toMatchObject({ queued: true, position: 1, blockedBy: "capacity", supervisorPid: null });
    for (const file of ["brief.md", "spec.json", "admit.json", "queued.json"]) {
      expect(fs.existsSync(path.join(second.dir, file)), file).toBe(true);
    }
    const queued = JSON.parse(fs.readFileSync(path.join(second.dir, "queued.json"), "utf8"));
    expect(queued).toMatchObject({ schema: 1, blockedBy: "capacity", blocker: { cap: 1 }, notBefore: null });
    expect(fs.existsSync(path.join(second.dir, "supervisor.json"))).toBe(false);

    // A queued dispatch counts as live for its name.
    const again = await dispatch(env, "second", agent(log, "again", "true"), ["--queue"]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error.code).toBe("E_ADMIT_DUPLICATE");

    const status = await runCli(["status", "--json"], { env });
    const row = (JSON.parse(status.stdout).dispatches as Record<string, unknown>[]).find(
      (r) => r.name === "second",
    );
    expect(row).toMatchObject({ state: "queued", queue: { position: 1, blockedBy: "capacity" } });
    const shown = JSON.parse((await runCli(["show", "second", "--json"], { env })).stdout).dispatch;
    expect(shown).toMatchObject({ state: "queued", queue: { position: 1 } });

    fs.writeFileSync(gate, "");
    // wait waits through the queue: the second one is started by the first one's supervisor, then recorded.
    const waited = await runCli(["wait", "second", "--json", "--timeout", "40s"], { env, timeoutMs: 60_000 });
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    expect(logLines(log)).toEqual(["start first", "end first", "start second", "end second"]);
    expect(
      JSON.parse(fs.readFileSync(path.join(second.dir, "promoted.json"), "utf8")).by.pid,
    ).toBeGreaterThan(1);
    // The first one's supervisor started the promoter as its stop began, and released it after its record.
    const events = fs
      .readFileSync(path.join(first.dir, "supervisor.log"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).event as string);
    expect(events.indexOf("promoter-started")).toBeGreaterThan(events.indexOf("decided"));
    expect(events.indexOf("promoter-started")).toBeLessThan(events.indexOf("recorded"));
    expect(events.indexOf("promoter")).toBeGreaterThan(events.indexOf("recorded"));
  }, 90_000);

  /** A holder that runs until `gate` exists, at the run's cap of 1, and one dispatch queued behind it. */
  async function holderAndWaiting(env: NodeJS.ProcessEnv) {
    const log = path.join(tempDir(), "agents.log");
    const gate = path.join(tempDir(), "go");
    parsed(
      await dispatch(env, "holder", agent(log, "holder", `while [ ! -e '${gate}' ]; do sleep 0.05; done`), [
        "--max-parallel",
        "1",
      ]),
      dispatched,
    );
    const waiting = parsed(
      await dispatch(env, "waiting", agent(log, "waiting", "true"), ["--queue"]),
      dispatched,
    );
    return { log, gate, waiting };
  }

  it("records a cancelled queued dispatch cancelled without ever starting it", async () => {
    const { env } = isolatedHome();
    const { log, gate, waiting } = await holderAndWaiting(env);
    const cancelled = await runCli(["cancel", "waiting", "--json"], { env });
    expect(JSON.parse(cancelled.stdout).cancelled).toMatchObject({ state: "recorded", status: "cancelled" });
    const exit = JSON.parse(fs.readFileSync(path.join(waiting.dir, "exit.json"), "utf8"));
    expect(exit.reason).toBe("cancelled");
    expect(recordOf(waiting.dir)).toMatchObject({ status: "cancelled", reason: "cancelled" });
    fs.writeFileSync(gate, "");
    await runCli(["wait", "holder", "--timeout", "30s"], { env, timeoutMs: 40_000 });
    // The holder's supervisor has promoted whatever there was: nothing, and the cancelled one never ran.
    await runCli(["status"], { env });
    expect(fs.existsSync(path.join(waiting.dir, "supervisor.json"))).toBe(false);
    expect(fs.existsSync(path.join(waiting.dir, "promoted.json"))).toBe(false);
    expect(logLines(log)).toEqual(["start holder", "end holder"]);
  }, 60_000);

  it("ends a queued dispatch a promotion finds cancelled under the run's lock, and leaves its record for after it", async () => {
    const { home, env } = isolatedHome();
    const { log, gate, waiting } = await holderAndWaiting(env);
    // Cancel's file, but not its lock (a cancel killed on its way); then room, so a promotion chooses it.
    fs.writeFileSync(path.join(waiting.dir, "cancel"), "");
    const run = runPaths(home, "default");
    const runFile = JSON.parse(fs.readFileSync(run.runFile, "utf8"));
    fs.writeFileSync(run.runFile, JSON.stringify({ ...runFile, maxParallel: 2 }));
    const promoted = await promoteRun(run, { clock: systemClock });
    // Under the lock: exit.json alone; the record is one of the duties for after it.
    expect(promoted).toEqual({ launched: 0, withDuties: [waiting.dir] });
    expect(JSON.parse(fs.readFileSync(path.join(waiting.dir, "exit.json"), "utf8")).reason).toBe("cancelled");
    expect(fs.existsSync(path.join(waiting.dir, "record.json"))).toBe(false);
    await doDutiesIn(promoted.withDuties, systemClock);
    expect(recordOf(waiting.dir)).toMatchObject({ status: "cancelled", reason: "cancelled" });
    // Recorded once: a reader after it finds it recorded and writes nothing more.
    const before = fs.statSync(path.join(waiting.dir, "record.json")).mtimeMs;
    await runCli(["status"], { env });
    expect(fs.statSync(path.join(waiting.dir, "record.json")).mtimeMs).toBe(before);
    fs.writeFileSync(gate, "");
    await runCli(["wait", "holder", "--timeout", "30s"], { env, timeoutMs: 40_000 });
    expect(fs.existsSync(path.join(waiting.dir, "supervisor.json"))).toBe(false);
    expect(fs.existsSync(path.join(waiting.dir, "promoted.json"))).toBe(false);
    expect(logLines(log)).toEqual(["start holder", "end holder"]);
  }, 60_000);

  it("caps a backend within the run: refused naming the backend without --queue, queued with it, remembered", async () => {
    const { home, env } = isolatedHome();
    const log = path.join(tempDir(), "agents.log");
    const gate = path.join(tempDir(), "go");
    const hold = `while [ ! -e '${gate}' ]; do sleep 0.05; done`;
    parsed(
      await dispatch(env, "one", agent(log, "one", hold), ["--max-parallel-backend", "exec=1"]),
      dispatched,
    );
    const run = JSON.parse(fs.readFileSync(path.join(home, "runs", "default", "run.json"), "utf8"));
    expect(run.maxParallelBackend).toEqual({ exec: 1 });
    const refused = await dispatch(env, "two", agent(log, "two", "true"));
    expect(refused.code).toBe(1);
    const error = JSON.parse(refused.stdout).error;
    expect(error.code).toBe("E_ADMIT_CAPACITY");
    expect(error.message).toContain("exec");
    const bad = await dispatch(env, "bad", agent(log, "bad", "true"), ["--max-parallel-backend", "nope=2"]);
    expect(bad.code).toBe(2);
    const two = parsed(await dispatch(env, "two", agent(log, "two", "true"), ["--queue"]), dispatched);
    expect(two).toMatchObject({ queued: true, blockedBy: "backend-cap" });
    expect(JSON.parse(fs.readFileSync(path.join(two.dir, "queued.json"), "utf8")).blocker).toEqual({
      backend: "exec",
      cap: 1,
    });
    fs.writeFileSync(gate, "");
    const waited = await runCli(["wait", "two", "--timeout", "40s"], { env, timeoutMs: 60_000 });
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    expect(logLines(log)).toEqual(["start one", "end one", "start two", "end two"]);
  }, 90_000);

  it("promotes the queue on the next catherd status after every supervisor was SIGKILLed", async () => {
    const { env } = isolatedHome();
    const log = path.join(tempDir(), "agents.log");
    const holders = [];
    for (const n of ["h1", "h2"]) {
      holders.push(
        parsed(await dispatch(env, n, agent(log, n, "sleep 1000"), ["--max-parallel", "2"]), dispatched),
      );
    }
    const queued: Queued[] = [];
    for (let i = 0; i < 10; i++)
      queued.push(parsed(await dispatch(env, `w${i}`, agent(log, `w${i}`, "true"), ["--queue"]), dispatched));
    expect(queued.every((q) => q.queued)).toBe(true);
    // A crash of the whole machine, as far as this run knows: supervisors and agents gone at once.
    for (const h of holders) {
      await waitFor(
        "the agent",
        () => (logLines(log).includes(`start ${h.name}`) ? true : undefined),
        20_000,
      );
      killPid(h.supervisorPid ?? undefined);
      reapDispatch(h.dispatchId);
    }
    const promoted = () => queued.filter((q) => fs.existsSync(path.join(q.dir, "promoted.json"))).length;
    expect(promoted()).toBe(0);
    const status = await runCli(["status", "--json"], { env });
    const rows = JSON.parse(status.stdout).dispatches as { name: string; state: string }[];
    expect(rows.filter((r) => r.name.startsWith("h")).map((r) => r.state)).toEqual(["recorded", "recorded"]);
    // The status itself started two (the cap); their supervisors may have started more since.
    expect(promoted()).toBeGreaterThanOrEqual(2);
    const waited = await runCli(["wait", ...queued.map((q) => q.name), "--timeout", "60s"], {
      env,
      timeoutMs: 80_000,
    });
    expect(waited.code, waited.stdout).toBe(0);
    for (const q of queued) expect(logLines(log).filter((l) => l === `start ${q.name}`)).toHaveLength(1);
  }, 120_000);

  it("starts a queued dispatch once when two readers promote at the same moment", async () => {
    const { env } = isolatedHome();
    const log = path.join(tempDir(), "agents.log");
    const holder = parsed(
      await dispatch(env, "holder", agent(log, "holder", "sleep 1000"), ["--max-parallel", "1"]),
      dispatched,
    );
    const waiting = parsed(
      await dispatch(env, "waiting", agent(log, "waiting", "sleep 0.5"), ["--queue"]),
      dispatched,
    );
    await waitFor("the holder", () => (logLines(log).includes("start holder") ? true : undefined), 20_000);
    killPid(holder.supervisorPid ?? undefined);
    reapDispatch(holder.dispatchId);
    const readers = await Promise.all([
      runCli(["status", "--json"], { env }),
      runCli(["show", "waiting", "--json"], { env }),
      runCli(["status", "--json"], { env }),
    ]);
    for (const r of readers) expect(r.code, r.stderr).toBe(0);
    await waitForJson(path.join(waiting.dir, "record.json"), 30_000);
    expect(logLines(log).filter((l) => l === "start waiting")).toHaveLength(1);
    const spawned = fs
      .readFileSync(path.join(waiting.dir, "supervisor.log"), "utf8")
      .split("\n")
      .filter((l) => l.includes('"spawned"'));
    expect(spawned).toHaveLength(1);
  }, 60_000);
});
