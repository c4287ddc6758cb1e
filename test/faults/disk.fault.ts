import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/infra/clock.js";
import { type FileWriter, systemFiles } from "../../supervisor/deps.js";
import { superviseDispatch } from "../../supervisor/supervise.js";
import { dispatchedOf, runCli } from "../helpers/cli.js";
import { fakeAgentFolder, readJson, tempDir } from "../helpers/folders.js";
import { isAlive, waitForPause } from "../helpers/processes.js";
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
  it("writes exit.json through its reserve when the disk refuses it for want of room (ENOSPC)", async () => {
    const t = trial("5 exit.json refused (ENOSPC), in process: written from the reserve");
    const pidFile = path.join(t.dir(), "pid");
    const { dir, code: exitCode } = await stoppedOnceStarted(t, { "exit.json": "ENOSPC" }, pidFile);
    expect(exitCode).toBe(0);
    expect(isAlive(Number(fs.readFileSync(pidFile, "utf8")))).toBe(false);
    expect(logOf(dir)).toContain('"event":"exit-write-failed"');
    expect(logOf(dir)).toContain('"event":"exit-written-from-reserve"');
    expect(readJson(path.join(dir, "exit.json"))).toMatchObject({
      reason: "cancelled",
      kind: "disk",
      error: { code: "E_IO_WRITE", message: expect.stringContaining("no space left on") },
    });
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({
      status: "failed",
      error: { kind: "disk" },
    });
    expect(fs.existsSync(path.join(dir, "disk-reserve"))).toBe(false);
    t.pass();
  });

  it("stops the agent and logs the failure when exit.json cannot be written (EACCES)", async () => {
    const t = trial("5 exit.json unwritable (EACCES), in process");
    const pidFile = path.join(t.dir(), "pid");
    const { dir, code: exitCode } = await stoppedOnceStarted(t, { "exit.json": "EACCES" }, pidFile);
    expect(exitCode).toBe(0);
    expect(isAlive(Number(fs.readFileSync(pidFile, "utf8")))).toBe(false);
    expect(fs.existsSync(path.join(dir, "exit.json"))).toBe(false);
    expect(logOf(dir)).toContain('"event":"exit-write-failed"');
    expect(logOf(dir)).toContain("EACCES");
    expect(recordFiles(dir)).toEqual([]);
    t.pass();
  });

  for (const code of ["ENOSPC", "EACCES"]) {
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

  it("stops the agent as kind disk when the disk refuses activity.json (EDQUOT)", async () => {
    const t = trial("5 activity.json refused (EDQUOT), in process");
    const pidFile = path.join(t.dir(), "pid");
    const { dir } = await inProcess(
      t,
      { "activity.json": "EDQUOT" },
      [{ touch: pidFile }, { out: "working" }, { hang: true }],
      LATE_IDLE,
    );
    expect(isAlive(Number(fs.readFileSync(pidFile, "utf8")))).toBe(false);
    expect(readJson(path.join(dir, "exit.json"))).toMatchObject({
      reason: "supervisor-error",
      kind: "disk",
      error: { code: "E_IO_WRITE", message: expect.stringContaining("disk quota exceeded on") },
    });
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({
      status: "failed",
      error: { kind: "disk" },
    });
    t.pass();
  });

  it("keeps supervising when thread.json, stall.json and activity.json cannot be written", async () => {
    const t = trial("5 notices unwritable, in process");
    const { dir } = await inProcess(
      t,
      { "thread.json": "EACCES", "stall.json": "EACCES", "activity.json": "EACCES" },
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

  it("records the dispatch itself, kind disk, when exit.json was refused with ENOSPC", async () => {
    const t = trial("5 exit.json refused (ENOSPC), real supervisor: written from the reserve");
    const { env } = homeFor(t);
    const pidFile = path.join(t.dir(), "pid");
    const d = await dispatchFake(
      t,
      { ...env, CATHERD_TEST_ONLY_FAIL_WRITE: "exit.json:ENOSPC" },
      [{ touch: pidFile }, { out: "x" }, { exit: 0 }],
      ["--name", "disk"],
    );
    await waitGone(d.supervisorPid, 20_000);
    expect(isAlive(Number(await waitForFile(pidFile)))).toBe(false);
    expect(logOf(d.dir)).toContain("exit-written-from-reserve");
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({
      status: "failed",
      reason: "exited",
      error: { code: "E_IO_WRITE", kind: "disk", message: expect.stringContaining("no space left on") },
    });
    t.pass();
  });

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

/**
 * Mounts a tmpfs of `size` at a fresh folder, unmounted once every process of the trial is reaped (a busy
 * mount does not unmount: `umount -l` is only the last resort). These trials need root: anywhere else they
 * fail, saying so — CI runs them as root, and a skipped row would claim nothing was wrong.
 */
function mountTmpfs(t: Trial, size: string): string {
  if (process.getuid?.() !== 0) {
    throw new Error("row 5's tmpfs trials mount a file system and need root: run the fault suite as root");
  }
  const dir = tempDir("catherd-fault-tmpfs-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir], { stdio: "pipe" });
  } catch (error) {
    const why = String((error as { stderr?: Buffer }).stderr ?? error).trim();
    throw new Error(`mount -t tmpfs at ${dir} was refused: ${why}`);
  }
  t.last(() => {
    try {
      execFileSync("umount", [dir], { stdio: "pipe" });
    } catch {
      execFileSync("umount", ["-l", dir], { stdio: "ignore" });
    }
  });
  return dir;
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

/** A catherd home on a fresh tmpfs of `size`, and the environment pointing at it. */
function homeOnTmpfs(t: Trial, size: string, extra: NodeJS.ProcessEnv = {}) {
  const mount = mountTmpfs(t, size);
  const home = path.join(mount, "home");
  return { mount, home, env: { ...process.env, CATHERD_HOME: home, CATHERD_RUN: "", ...extra } };
}

/** Where the words of a full tmpfs name it: "no space left on <mount point> (tmpfs)". */
const noSpaceOn = (mount: string) => `no space left on ${fs.realpathSync(mount)} (tmpfs)`;

/** An exec agent that writes lines until its disk refuses one, then stays (its pid in `pidFile`). */
function diskFiller(pidFile: string): string[] {
  const line = `{"type":"line","pad":"${"x".repeat(200)}"}`;
  return [
    "/bin/sh",
    "-c",
    `echo $$ > '${pidFile}'; while printf '%s\\n' '${line}'; do :; done; exec sleep 600`,
  ];
}

/** `catherd wait <name> --json`, answered within the trial's deadline. */
async function waitOn(name: string, env: NodeJS.ProcessEnv) {
  const result = await runCli(["wait", name, "--json"], { env, timeoutMs: 60_000 });
  expect(result.stdout, `wait did not answer: ${result.stderr}`).not.toBe("");
  return { code: result.code, json: jsonOf(result) };
}

describe("row 5: the disk, a real tmpfs that fills up", () => {
  it("stops an agent that fills its disk and records it failed, kind disk, with the disk's words", async () => {
    const t = trial("5 agent fills a tmpfs: stopped, recorded disk");
    const { mount, env } = homeOnTmpfs(t, "2m");
    const pidFile = path.join(t.dir(), "pid");
    const dispatched = await runCli(
      [
        "dispatch",
        "--backend",
        "exec",
        "--name",
        "filler",
        "--json",
        "--brief",
        "fill",
        "--",
        ...diskFiller(pidFile),
      ],
      { env, timeoutMs: 60_000 },
    );
    expect(dispatched.code, dispatched.stderr).toBe(0);
    const d = dispatchedOf(dispatched);
    t.dispatch(d.dispatchId);
    t.pid(d.supervisorPid);
    const waited = await waitOn("filler", env);
    expect(waited.code).toBe(1);
    expect(waited.json).toMatchObject({
      records: [
        { status: "failed", reason: "supervisor-error", error: { code: "E_IO_WRITE", kind: "disk" } },
      ],
    });
    const record = readJson(path.join(d.dir, "record.json"));
    expect((record.error as { message: string }).message).toContain(noSpaceOn(mount));
    expect(readJson(path.join(d.dir, "exit.json"))).toMatchObject({
      kind: "disk",
      error: { code: "E_IO_WRITE" },
    });
    await waitGone(d.supervisorPid, 20_000);
    expect(isAlive(Number(fs.readFileSync(pidFile, "utf8")))).toBe(false);
    expect(logOf(d.dir)).toContain('"event":"disk-full"');
    expect(fs.existsSync(path.join(d.dir, "disk-reserve")), "the reserve is given back").toBe(false);
    t.pass();
  });

  it("records a quiet agent's dispatch as disk once its disk fills before the end", async () => {
    const t = trial("5 tmpfs full at the end of a run: exit.json from the reserve");
    const { mount, env } = homeOnTmpfs(t, "2m");
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
    const filler = fill(mount);
    fs.writeFileSync(go, "go");
    await waitGone(d.supervisorPid, 20_000);
    expect(isAlive(Number(fs.readFileSync(pidFile, "utf8")))).toBe(false);
    expect(readJson(path.join(d.dir, "exit.json"))).toMatchObject({
      kind: "disk",
      error: { code: "E_IO_WRITE" },
    });
    const waited = await waitOn("full", env);
    expect(waited.code).toBe(1);
    expect(waited.json).toMatchObject({ records: [{ status: "failed", error: { kind: "disk" } }] });
    expect(readJson(path.join(d.dir, "record.json")).error).toMatchObject({
      message: expect.stringContaining(noSpaceOn(mount)),
    });
    fs.rmSync(filler);
    t.pass();
  });

  it("says the disk is full where nothing can be written, and records the disk's words once space is back", async () => {
    const t = trial("5 tmpfs full before the spawn: status and wait say so, then the record");
    const { mount, env } = homeOnTmpfs(t, "2m", { CATHERD_TEST_ONLY_PAUSE_AT: "before-spawn" });
    const readerEnv = { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "" };
    const never = path.join(t.dir(), "never");
    const d = await dispatchFake(t, env, [{ touch: never }, { exit: 0 }], ["--name", "nospace"]);
    await waitForPause(d.dir, "before-spawn");
    const filler = fill(mount);
    process.kill(d.supervisorPid, "SIGCONT");
    await waitGone(d.supervisorPid, 20_000);
    expect(fs.existsSync(never), "no agent was started").toBe(false);
    expect(fs.existsSync(path.join(d.dir, "exit.json"))).toBe(false);
    expect(fs.existsSync(path.join(d.dir, "disk-full"))).toBe(true);
    const status = await runCli(["status", "--json"], { env: readerEnv });
    expect(status.code, status.stderr).toBe(0);
    const row = (
      jsonOf(status).dispatches as { state: string; problems: { code: string; message: string }[] }[]
    )[0];
    expect(row?.state).toBe("lost");
    expect(row?.problems).toContainEqual(
      expect.objectContaining({
        code: "E_IO_WRITE",
        message: expect.stringContaining(`the disk is full: ${noSpaceOn(mount)}`),
      }),
    );
    const waited = await waitOn("nospace", readerEnv);
    expect(waited.code).toBe(1);
    expect(waited.json).toMatchObject({
      error: { code: "E_IO_WRITE", message: expect.stringContaining("the disk is full") },
    });
    expect(recordFiles(d.dir)).toEqual([]);
    fs.rmSync(filler);
    const after = await waitOn("nospace", readerEnv);
    expect(after.code).toBe(1);
    expect(after.json).toMatchObject({
      records: [{ status: "failed", reason: "lost", error: { code: "E_IO_WRITE", kind: "disk" } }],
    });
    expect(readJson(path.join(d.dir, "record.json")).error).toMatchObject({
      message: expect.stringContaining("found the disk full"),
    });
    t.pass();
  });

  it("refuses a dispatch on a full disk with E_IO_WRITE and leaves no half-written dispatch behind", async () => {
    const t = trial("5 dispatch onto a full tmpfs");
    const { mount, home, env } = homeOnTmpfs(t, "1m");
    fs.mkdirSync(path.join(home, "runs/default/dispatches"), { recursive: true, mode: 0o700 });
    fs.mkdirSync(path.join(home, "runs/default/live"), { recursive: true, mode: 0o700 });
    const filler = fill(mount);
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
