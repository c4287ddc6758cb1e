import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { recordFileSchema } from "../../src/domain/schemas.js";
import { dispatchedOf, fakeDispatchArgs, isolatedHome, runCli } from "../helpers/cli.js";
import { readJson, reapAll, tempDir } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForFile, waitForJson } from "../helpers/wait.js";

const dispatched: string[] = [];
afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

const rowSchema = z
  .object({
    run: z.string(),
    name: z.string().nullable(),
    dispatchId: z.string(),
    dir: z.string(),
    backend: z.string().nullable(),
    state: z.enum(["starting", "running", "stopping", "exited", "recorded", "orphaned", "lost"]),
  })
  .passthrough();
const statusSchema = z.object({ dispatches: z.array(rowSchema) });
const waitSchema = z.object({ records: z.array(recordFileSchema) });
const errorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), fix: z.string().nullable() }),
});

async function dispatch(
  env: NodeJS.ProcessEnv,
  name: string,
  steps: Record<string, unknown>[],
  extra: string[] = [],
) {
  const scenario = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(scenario, JSON.stringify({ steps }));
  const result = await runCli(fakeDispatchArgs(scenario, ["--name", name, ...extra]), { env });
  expect(result.stderr).toBe("");
  const d = dispatchedOf(result);
  dispatched.push(d.dispatchId);
  return d;
}

/** An exec output line longer than a one-line excerpt, with a tab in it. */
const COMPILER_LINE =
  "src/sum.ts:12:5 - error TS2345:\tArgument of type 'string' is not assignable to parameter of type 'number'.";

async function json(env: NodeJS.ProcessEnv, args: string[]) {
  const result = await runCli([...args, "--json"], { env });
  return { ...result, data: JSON.parse(result.stdout) as unknown };
}

describe("status, show, logs, result, wait", () => {
  it("reports a running dispatch, then its record, through every read command", async () => {
    const { env } = isolatedHome();
    // The agent runs until the test says go: the reads of a running dispatch take as long as they take.
    const running = path.join(tempDir(), "running");
    const go = path.join(tempDir(), "go");
    const d = await dispatch(env, "worker", [
      { out: "compiling" },
      { touch: running },
      { waitFor: go },
      { out: COMPILER_LINE },
      { out: "all done" },
      { exit: 0 },
    ]);
    await waitForFile(running);
    const live = statusSchema.parse((await json(env, ["status"])).data);
    expect(live.dispatches).toMatchObject([
      {
        name: "worker",
        state: "running",
        dispatchId: d.dispatchId,
        admittedAt: readJson(path.join(d.dir, "admit.json")).admittedAt,
        startedAt: readJson(path.join(d.dir, "supervisor.json")).startedAt,
      },
    ]);
    const text = await runCli(["status"], { env: { ...env, NO_COLOR: "1" } });
    expect(text.stdout).toMatch(/worker\s+\w{6} exec\s+running/);
    for (const line of text.stdout.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
    fs.writeFileSync(go, "go");

    const waited = await json(env, ["wait", "worker", "--timeout", "20s"]);
    expect(waited.code).toBe(0);
    expect(waitSchema.parse(waited.data).records).toMatchObject([{ status: "ok", name: "worker" }]);

    const result = await json(env, ["result", "worker"]);
    const record = recordFileSchema.parse(result.data);
    expect(record).toMatchObject({ status: "ok", dispatchId: d.dispatchId });
    // A recorded row reads record.json alone: its admission time and the supervisor's start from the record.
    expect(statusSchema.parse((await json(env, ["status"])).data).dispatches).toMatchObject([
      { state: "recorded", admittedAt: record.admittedAt, startedAt: record.startedAt },
    ]);
    const shown = (await json(env, ["show", d.dispatchId])).data as {
      dispatch: { state: string; events: string[] };
    };
    expect(shown.dispatch.state).toBe("recorded");
    // show gives one-line excerpts; logs prints an exec command's lines as they are, like --raw.
    expect(shown.dispatch.events).toEqual([
      "compiling",
      `${COMPILER_LINE.replace("\t", " ").slice(0, 59)}…`,
      "all done",
    ]);
    const whole = `compiling\n${COMPILER_LINE}\nall done\n`;
    expect((await runCli(["logs", "worker"], { env })).stdout).toBe(whole);
    expect((await runCli(["logs", d.dir, "--raw"], { env })).stdout).toBe(whole);
    expect((await json(env, ["logs", "worker"])).data).toEqual({
      lines: ["compiling", COMPILER_LINE, "all done"],
      cursor: Buffer.byteLength(whole),
      restarted: false,
    });
  });

  it("marks a finished result unread until `result` reads it", async () => {
    const { env } = isolatedHome();
    const d = await dispatch(env, "quick", [{ exit: 0 }]);
    await waitForJson(path.join(d.dir, "record.json"));
    const before = await runCli(["status"], { env: { ...env, NO_COLOR: "1" } });
    expect(before.stdout).toMatch(/^\* quick/m);
    await runCli(["result", "quick"], { env });
    const after = await runCli(["status"], { env: { ...env, NO_COLOR: "1" } });
    expect(after.stdout).toMatch(/^ {2}quick/m);
  });

  it("returns from wait --any on the first of three, with exit 0 when it is ok", async () => {
    const { env } = isolatedHome();
    const slow = [{ out: "x" }, { hang: true }];
    await dispatch(env, "a", slow);
    await dispatch(env, "b", [{ sleep: 200 }, { exit: 0 }]);
    await dispatch(env, "c", slow);
    const waited = await json(env, ["wait", "a", "b", "c", "--any", "--timeout", "20s"]);
    expect(waited.code).toBe(0);
    expect(waitSchema.parse(waited.data).records.map((r) => r.name)).toEqual(["b"]);
    await runCli(["cancel", "a", "--wait"], { env });
    await runCli(["cancel", "c", "--wait"], { env });
  });

  it("exits 1 from wait when a record is not ok, and 124 on timeout", async () => {
    const { env } = isolatedHome();
    await dispatch(env, "bad", [{ exit: 4 }]);
    const failed = await json(env, ["wait", "bad", "--timeout", "20s"]);
    expect(failed.code).toBe(1);
    expect(waitSchema.parse(failed.data).records[0]).toMatchObject({ status: "failed", exitCode: 4 });
    await dispatch(env, "slow", [{ out: "x" }, { hang: true }]);
    const timedOut = await json(env, ["wait", "slow", "--timeout", "300ms"]);
    expect(timedOut.code).toBe(124);
    await runCli(["cancel", "slow", "--wait"], { env });
  });

  it("answers an unknown dispatch with E_DISPATCH_NOT_FOUND and a fix naming catherd status", async () => {
    const { env } = isolatedHome();
    for (const verb of ["show", "logs", "result", "cancel", "wait"]) {
      const result = await json(env, [verb, "nope"]);
      expect(result.code, verb).toBe(1);
      expect(errorSchema.parse(result.data).error).toMatchObject({
        code: "E_DISPATCH_NOT_FOUND",
        fix: expect.stringContaining("catherd status"),
      });
    }
    const outside = await json(env, ["show", "../../etc"]);
    expect(errorSchema.parse(outside.data).error.code).toBe("E_DISPATCH_NOT_FOUND");
  });
});

describe("cancel, orphans and lost dispatches", () => {
  it("cancels a running dispatch and --wait returns once it is recorded", async () => {
    const { env } = isolatedHome();
    const d = await dispatch(env, "long", [{ out: "x" }, { hang: true }]);
    const result = await json(env, ["cancel", "long", "--wait"]);
    expect(result.code).toBe(0);
    expect(result.data).toMatchObject({
      cancelled: { dispatchId: d.dispatchId, state: "recorded", status: "cancelled" },
    });
    expect(readJson(path.join(d.dir, "exit.json"))).toMatchObject({ reason: "cancelled" });
  });

  it("has an orphan adopted when its supervisor is SIGKILLed: running again, and cancel ends it", async () => {
    const { env } = isolatedHome();
    const d = await dispatch(env, "orphan", [{ out: "x" }, { hang: true }]);
    const proc = await waitForJson<{ pid: number }>(path.join(d.dir, "proc.json"));
    killPid(d.supervisorPid);
    await waitFor("supervisor gone", () => (isAlive(d.supervisorPid) ? undefined : true));
    const status = statusSchema.parse((await json(env, ["status"])).data);
    expect(status.dispatches[0]).toMatchObject({ state: "running" });
    const adopter = readJson(path.join(d.dir, "supervisor.json"));
    expect(adopter).toMatchObject({ adoptions: 1 });
    expect(adopter.pid).not.toBe(d.supervisorPid);
    expect(isAlive(proc.pid)).toBe(true);
    const cancelled = await json(env, ["cancel", "orphan", "--wait"]);
    expect(cancelled.data).toMatchObject({ cancelled: { state: "recorded", status: "cancelled" } });
    expect(isAlive(proc.pid)).toBe(false);
    expect(readJson(path.join(d.dir, "exit.json"))).toMatchObject({
      reason: "cancelled",
      adoptions: 1,
      stop: { term: true },
    });
  });

  it("records a dispatch lost exactly once when ten readers race", async () => {
    const { env } = isolatedHome();
    const d = await dispatch(env, "doomed", [{ out: "x" }, { hang: true }]);
    const proc = await waitForJson<{ pid: number }>(path.join(d.dir, "proc.json"));
    killPid(d.supervisorPid);
    killPid(proc.pid);
    await waitFor("both gone", () => (isAlive(d.supervisorPid) || isAlive(proc.pid) ? undefined : true));
    const readers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => json(env, i % 2 === 0 ? ["status"] : ["show", "doomed"])),
    );
    for (const r of readers) expect(r.code).toBe(0);
    const record = readJson(path.join(d.dir, "record.json"));
    expect(record).toMatchObject({ status: "lost", reason: "lost", error: { code: "E_SUPERVISOR_LOST" } });
    const files = fs.readdirSync(d.dir).filter((f) => f.startsWith("record") || f.startsWith(".record"));
    expect(files).toEqual(["record.json"]);
    const log = fs.readFileSync(path.join(d.dir, "exit.json"), "utf8");
    expect(JSON.parse(log).reason).toBe("lost");
  });
});

describe("hand-edited and corrupt folders", () => {
  it("reports a torn record.json, a newer schema and a missing exit.json clearly, and keeps the others", async () => {
    const { env } = isolatedHome();
    const ok = await dispatch(env, "fine", [{ exit: 0 }]);
    const torn = await dispatch(env, "torn", [{ exit: 0 }]);
    const newer = await dispatch(env, "newer", [{ exit: 0 }]);
    const noExit = await dispatch(env, "noexit", [{ exit: 0 }]);
    for (const d of [ok, torn, newer, noExit]) await waitForJson(path.join(d.dir, "record.json"));
    fs.writeFileSync(path.join(torn.dir, "record.json"), '{"schema":1,"status":"o');
    fs.writeFileSync(path.join(newer.dir, "record.json"), JSON.stringify({ schema: 9, anything: true }));
    fs.rmSync(path.join(noExit.dir, "exit.json"));
    const status = await json(env, ["status", "--all"]);
    expect(status.code).toBe(0);
    const rows = statusSchema.parse(status.data).dispatches;
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(byName.fine).toMatchObject({ state: "recorded", status: "ok" });
    expect(byName.noexit).toMatchObject({ state: "recorded", status: "ok" });
    expect(byName.torn).toMatchObject({ state: "recorded", problems: [{ code: "E_FILE_CORRUPT" }] });
    expect(byName.newer).toMatchObject({ state: "recorded", problems: [{ code: "E_SCHEMA_NEWER" }] });
    const text = await runCli(["status", "--all"], { env: { ...env, NO_COLOR: "1" } });
    expect(text.stdout).toContain("! record.json is torn");
    expect(text.stdout).toContain("! record.json is from a newer");
    const result = await json(env, ["result", "newer"]);
    expect(errorSchema.parse(result.data).error).toMatchObject({
      code: "E_SCHEMA_NEWER",
      fix: expect.stringContaining("upgrade"),
    });
    const shown = await runCli(["show", "torn"], { env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("E_FILE_CORRUPT");
  });
});

describe("catherd demo", () => {
  it("runs the simulated agent end to end: tool calls, a stall notice, a final answer, an ok record", async () => {
    const result = await runCli(["demo", "--json"], { timeoutMs: 60_000 });
    expect(result.code).toBe(0);
    const data = JSON.parse(result.stdout) as { record: z.infer<typeof recordFileSchema>; home: string };
    expect(recordFileSchema.parse(data.record)).toMatchObject({
      status: "ok",
      backend: "codex",
      tokens: { input: 18_240, cached: 12_032, output: 611 },
    });
    const dir = path.join(data.home, "runs/demo/dispatches/demo", data.record.dispatchId);
    dispatched.push(data.record.dispatchId);
    onTestFinished(() =>
      fs.rmSync(data.home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }),
    );
    expect(readJson(path.join(dir, "exit.json"))).toMatchObject({ reason: "exited", stalled: true });
    expect(data.record.reply).toContain("npm test passes");
  });
});
