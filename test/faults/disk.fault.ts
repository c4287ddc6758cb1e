import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/infra/clock.js";
import { type FileWriter, systemFiles } from "../../supervisor/deps.js";
import { superviseDispatch } from "../../supervisor/supervise.js";
import { runCli } from "../helpers/cli.js";
import { fakeAgentFolder, readJson } from "../helpers/folders.js";
import { isAlive } from "../helpers/processes.js";
import { waitFor, waitForFile } from "../helpers/wait.js";
import { dispatchFake, homeFor, jsonOf, type Trial, trial, useFaultKit, waitGone } from "./kit.js";

// Row 5: the disk. exit.json or record.json cannot be written (ENOSPC, EACCES): the agent is still stopped,
// the failure is in supervisor.log, and a later reader records the dispatch once the disk is back.

useFaultKit();

function failing(names: Record<string, string>): FileWriter {
  const check = (file: string) => {
    const code = names[path.basename(file)];
    if (code !== undefined) {
      throw Object.assign(new Error(`${code}: no space left on device, open '${file}'`), {
        code,
        syscall: "open",
        path: file,
      });
    }
  };
  return {
    writeJson: (file, value) => {
      check(file);
      systemFiles.writeJson(file, value);
    },
    createJson: (file, value) => {
      check(file);
      return systemFiles.createJson(file, value);
    },
  };
}

/**
 * An idle limit far beyond any start-up delay of a loaded machine: the agent's own exit, or the test's
 * interrupt, ends the run.
 */
const LATE_IDLE = { idleMs: 60_000 };

const logOf = (dir: string) => fs.readFileSync(path.join(dir, "supervisor.log"), "utf8");

function recordFiles(dir: string): string[] {
  return fs.readdirSync(dir).filter((f) => f.includes("record.json"));
}

/**
 * The supervisor in this process, with a faulty file writer, on a fake agent following `steps`. An agent
 * that hangs is ended by the 400 ms idle limit; one that exits on its own gets a limit no loaded machine
 * reaches before it does, so its exit is what the test sees. `interrupt` is the supervisor's SIGTERM.
 */
async function inProcess(
  t: Trial,
  faults: Record<string, string>,
  steps: Record<string, unknown>[],
  spec: Record<string, unknown> = { idleMs: 400 },
  interrupt: AbortSignal = new AbortController().signal,
) {
  const parent = t.dir();
  const { dir, id } = fakeAgentFolder({ steps }, spec, parent);
  t.dispatch(id);
  const code = await superviseDispatch(dir, { clock: systemClock, files: failing(faults) }, interrupt);
  return { dir, code };
}

/**
 * A hung agent stopped once it has written its pid: the supervisor is interrupted (its SIGTERM) only
 * then, where an idle limit could fire before a loaded machine has even started the fake agent.
 */
async function stoppedOnceStarted(t: Trial, faults: Record<string, string>, pidFile: string) {
  const interrupt = new AbortController();
  const supervised = inProcess(
    t,
    faults,
    [{ touch: pidFile }, { out: "x" }, { hang: true }],
    LATE_IDLE,
    interrupt.signal,
  );
  try {
    await waitForFile(pidFile);
  } finally {
    interrupt.abort("SIGTERM");
  }
  return await supervised;
}

describe("row 5: the disk, through the supervisor's file port (in process)", () => {
  for (const code of ["ENOSPC", "EACCES"]) {
    it(`stops the agent and logs the failure when exit.json cannot be written (${code})`, async () => {
      const t = trial(`5 exit.json unwritable (${code}), in process`);
      const pidFile = path.join(t.dir(), "pid");
      const { dir, code: exitCode } = await stoppedOnceStarted(t, { "exit.json": code }, pidFile);
      expect(exitCode).toBe(0);
      expect(isAlive(Number(fs.readFileSync(pidFile, "utf8")))).toBe(false);
      expect(fs.existsSync(path.join(dir, "exit.json"))).toBe(false);
      expect(logOf(dir)).toContain('"event":"exit-write-failed"');
      expect(logOf(dir)).toContain(code);
      expect(recordFiles(dir)).toEqual([]);
      t.pass();
    });

    it(`keeps exit.json and logs the failure when record.json cannot be written (${code})`, async () => {
      const t = trial(`5 record.json unwritable (${code}), in process`);
      const { dir } = await inProcess(t, { "record.json": code }, [{ out: "x" }, { exit: 0 }], LATE_IDLE);
      expect(readJson(path.join(dir, "exit.json"))).toMatchObject({ reason: "exited", code: 0 });
      expect(logOf(dir)).toContain('"event":"record-write-failed"');
      expect(recordFiles(dir)).toEqual([]);
      t.pass();
    });
  }

  it("stops the agent and records supervisor-error when proc.json cannot be written", async () => {
    const t = trial("5 proc.json unwritable, in process");
    const pidFile = path.join(t.dir(), "pid");
    const { dir } = await inProcess(t, { "proc.json": "ENOSPC" }, [{ touch: pidFile }, { hang: true }]);
    expect(readJson(path.join(dir, "exit.json"))).toMatchObject({
      reason: "supervisor-error",
      error: { code: "E_IO_WRITE", message: expect.stringContaining("proc.json") },
    });
    expect(isAlive(readJson(path.join(dir, "exit.json")).pid as number)).toBe(false);
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({ status: "failed" });
    t.pass();
  });

  it("keeps supervising when thread.json, stall.json and activity.json cannot be written", async () => {
    const t = trial("5 notices unwritable, in process");
    const { dir } = await inProcess(
      t,
      { "thread.json": "ENOSPC", "stall.json": "ENOSPC", "activity.json": "ENOSPC" },
      [{ out: '{"type":"thread.started","thread_id":"t1"}' }, { sleep: 300 }, { out: "more" }, { exit: 0 }],
      { ...LATE_IDLE, stallMs: 100 },
    );
    expect(readJson(path.join(dir, "exit.json"))).toMatchObject({ reason: "exited", code: 0 });
    expect(logOf(dir)).toContain('"event":"write-failed"');
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({ status: "ok" });
    t.pass();
  });
});

describe("row 5: the disk, a real supervisor with an injected fault (CATHERD_TEST_ONLY_FAIL_WRITE)", () => {
  for (const [file, code] of [
    ["exit.json", "ENOSPC"],
    ["exit.json", "EACCES"],
    ["record.json", "ENOSPC"],
    ["record.json", "EACCES"],
  ] as const) {
    it(`records the dispatch once through a later reader when ${file} failed with ${code}`, async () => {
      const t = trial(`5 ${file} unwritable (${code}), real supervisor, then a reader`);
      const { env } = homeFor(t);
      const pidFile = path.join(t.dir(), "pid");
      const d = await dispatchFake(
        t,
        { ...env, CATHERD_TEST_ONLY_FAIL_WRITE: `${file}:${code}` },
        [{ touch: pidFile }, { out: "x" }, { exit: 0 }],
        ["--name", "disk"],
      );
      await waitGone(d.supervisorPid, 20_000);
      const agent = Number(await waitForFile(pidFile));
      expect(isAlive(agent)).toBe(false);
      const log = logOf(d.dir);
      expect(log).toContain(file === "exit.json" ? "exit-write-failed" : "record-write-failed");
      expect(log).toContain(code);
      expect(recordFiles(d.dir)).toEqual([]);
      const readers = await Promise.all(
        Array.from({ length: 5 }, () => runCli(["status", "--json"], { env })),
      );
      for (const r of readers) expect(r.code).toBe(0);
      expect(recordFiles(d.dir)).toEqual(["record.json"]);
      expect(readJson(path.join(d.dir, "record.json"))).toMatchObject(
        file === "exit.json" ? { status: "lost", reason: "lost" } : { status: "ok", reason: "exited" },
      );
      t.pass();
    });
  }

  it("fails the dispatch clearly, recorded lost, when supervisor.json cannot be written", async () => {
    const t = trial("5 supervisor.json unwritable, real supervisor");
    const { home, env } = homeFor(t);
    const scenario = path.join(t.dir(), "s.json");
    fs.writeFileSync(scenario, JSON.stringify({ steps: [{ exit: 0 }] }));
    const result = await runCli(
      ["dispatch", "--backend", "exec", "--name", "nosup", "--json", "--", process.execPath, scenario],
      { env: { ...env, CATHERD_TEST_ONLY_FAIL_WRITE: "supervisor.json:ENOSPC" }, timeoutMs: 30_000 },
    );
    expect(result.code).toBe(1);
    expect(jsonOf(result)).toMatchObject({ error: { code: "E_SUPERVISOR_START" } });
    const dir = path.join(home, "runs/default/dispatches/nosup");
    const [id] = fs.readdirSync(dir).filter((f) => f !== "latest");
    t.dispatch(id as string);
    expect(readJson(path.join(dir, id as string, "record.json"))).toMatchObject({ status: "lost" });
    t.pass();
  });
});

/** Mounts a tmpfs of `size` at a fresh folder; null (with the reason) where the machine refuses. */
function mountTmpfs(t: Trial, size: string): { dir: string } | { refused: string } {
  const dir = t.dir("catherd-fault-tmpfs-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir], { stdio: "pipe" });
  } catch (error) {
    return { refused: String((error as { stderr?: Buffer }).stderr ?? error).trim() };
  }
  t.cleanup(() => {
    execFileSync("umount", ["-l", dir], { stdio: "ignore" });
  });
  return { dir };
}

/** Fills the file system holding `dir` until ENOSPC; returns the filler to remove. */
function fill(dir: string): string {
  const filler = path.join(dir, "filler");
  const fd = fs.openSync(filler, "w");
  const block = Buffer.alloc(4096, 0x66);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    fs.closeSync(fd);
  }
  // The last partial block too.
  try {
    for (;;) fs.appendFileSync(filler, "f");
  } catch {
    // full
  }
  return filler;
}

describe("row 5: the disk, a real tmpfs that fills up", () => {
  it("stops the agent, logs the failure, and lets a reader record the dispatch once space is back", async (context) => {
    const t = trial("5 tmpfs full at the end of a run, then space back");
    const mounted = mountTmpfs(t, "2m");
    if ("refused" in mounted) {
      t.note(`skipped: mount refused: ${mounted.refused}`);
      context.skip(`mount -t tmpfs was refused: ${mounted.refused}`);
      return;
    }
    const home = path.join(mounted.dir, "home");
    const env = { ...process.env, CATHERD_HOME: home, CATHERD_RUN: "" };
    const go = path.join(t.dir(), "go");
    const pidFile = path.join(t.dir(), "pid");
    const d = await dispatchFake(
      t,
      env,
      [{ touch: pidFile }, { out: "working" }, { waitFor: go }, { exit: 0 }],
      ["--name", "full"],
    );
    await waitForFile(pidFile);
    await waitFor("proc.json", () => (fs.existsSync(path.join(d.dir, "proc.json")) ? true : undefined));
    const filler = fill(mounted.dir);
    fs.writeFileSync(go, "go");
    await waitGone(d.supervisorPid, 20_000);
    expect(isAlive(Number(fs.readFileSync(pidFile, "utf8")))).toBe(false);
    expect(fs.existsSync(path.join(d.dir, "exit.json"))).toBe(false);
    const log = logOf(d.dir);
    expect(log).toContain('"event":"exit-write-failed"');
    expect(log).toContain("ENOSPC");
    // While the disk is full a reader reports and does not crash.
    const whileFull = await runCli(["status", "--json"], { env });
    expect(whileFull.code, whileFull.stdout + whileFull.stderr).toBe(0);
    expect(jsonOf(whileFull)).toMatchObject({ dispatches: [{ problems: [{ code: "E_IO_WRITE" }] }] });
    expect(recordFiles(d.dir)).toEqual([]);
    fs.rmSync(filler);
    const after = await runCli(["status", "--json"], { env });
    expect(after.code).toBe(0);
    expect(recordFiles(d.dir)).toEqual(["record.json"]);
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({ status: "lost" });
    t.pass();
  });

  it("refuses a dispatch on a full disk with E_IO_WRITE and leaves no half-written dispatch behind", async (context) => {
    const t = trial("5 dispatch onto a full tmpfs");
    const mounted = mountTmpfs(t, "1m");
    if ("refused" in mounted) {
      t.note(`skipped: mount refused: ${mounted.refused}`);
      context.skip(`mount -t tmpfs was refused: ${mounted.refused}`);
      return;
    }
    const home = path.join(mounted.dir, "home");
    fs.mkdirSync(path.join(home, "runs/default/dispatches"), { recursive: true, mode: 0o700 });
    fs.mkdirSync(path.join(home, "runs/default/live"), { recursive: true, mode: 0o700 });
    const env = { ...process.env, CATHERD_HOME: home, CATHERD_RUN: "" };
    const filler = fill(mounted.dir);
    const result = await runCli(
      ["dispatch", "--backend", "exec", "--name", "nospace", "--json", "--brief", "hello", "--", "/bin/true"],
      { env },
    );
    expect(result.code, result.stdout).toBe(1);
    expect(jsonOf(result)).toMatchObject({ error: { code: "E_IO_WRITE" } });
    const status = await runCli(["status", "--all", "--json"], { env });
    expect(status.code).toBe(0);
    expect(jsonOf(status)).toEqual({ dispatches: [], cleanableBytes: 0, runBudget: null });
    fs.rmSync(filler);
    t.pass();
  });
});
