import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, expect, inject, onTestFinished } from "vitest";
import { readProcStat } from "../../src/infra/proc-stat.js";
import { type CliResult, dispatchedOf, fakeDispatchArgs, runCli } from "../helpers/cli.js";
import { reapAll, SUPERVISOR_MAIN, tempDir } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitDeadlineMs, waitFor } from "../helpers/wait.js";

// The fault matrix's shared kit (specs/reliability.md): each test tallies its trials into a row of the
// matrix — tried, passed, lost, left running — and leaves nothing behind, even when it fails.

/** Where every fault test appends its figures; figures.setup.ts prints the table at the end. */
function figuresFile(): string {
  return inject("figuresFile") ?? path.join(os.tmpdir(), "catherd-fault-figures.jsonl");
}

export interface Tally {
  tried: number;
  passed: number;
  /** Admitted dispatches that ended without their own record (or with a record of status lost, unexpected). */
  lost: number;
  /** Processes found still running after the trial (reaped by the kit). */
  leftRunning: number;
}

interface Current {
  row: string;
  tally: Tally;
  single: boolean;
  passedSingle: boolean;
  notes: string[];
  dispatchIds: string[];
  pids: number[];
  helpers: number[];
  dirs: string[];
  cleanups: (() => void | Promise<void>)[];
  /** Run last, once everything of the trial is reaped (the heavy-trial lock). */
  lasts: (() => void)[];
}

let current: Current | null = null;

/**
 * How many dispatchers the crowd rows fire at once (row 6's simultaneous admissions, row 11's chatty
 * dispatches): 100, or CATHERD_FAULT_CROWD (CI runs 50 to stay within its time). The figure is in the row.
 */
export const CROWD = Number(process.env.CATHERD_FAULT_CROWD ?? 100);

/**
 * A wait in the fault matrix gives up after this when it names no deadline: its trials run beside heavy
 * ones (a hundred dispatches, 20 MB lines) on two cores, where a node start alone can take seconds.
 */
const FAULT_WAIT_MS = 60_000;

/**
 * Registers the kit's afterEach in a fault file: it kills every pid the test started, reaps every process
 * of its dispatches, counts those as left running, removes its temp folders, and appends the row's figures.
 */
export function useFaultKit(): void {
  waitDeadlineMs(FAULT_WAIT_MS);
  afterEach(async () => {
    const c = current;
    current = null;
    if (c === null) return;
    for (const cleanup of c.cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // cleanups are best effort; the figures say what was left
      }
    }
    const leftPids = c.pids.filter(isAlive);
    for (const pid of [...c.pids, ...c.helpers]) killPid(pid);
    const leftDispatch = reapAll(c.dispatchIds);
    c.tally.leftRunning += leftPids.length + leftDispatch;
    if (c.single) {
      c.tally.tried = Math.max(c.tally.tried, 1);
      // A single trial that left something running did not pass, whatever it asserted.
      if (c.passedSingle && c.tally.leftRunning === 0) c.tally.passed = Math.max(c.tally.passed, 1);
    }
    fs.appendFileSync(figuresFile(), `${JSON.stringify({ row: c.row, ...c.tally, notes: c.notes })}\n`);
    for (const dir of c.dirs) fs.rmSync(dir, { recursive: true, force: true });
    for (const last of c.lasts) last();
    expect(leftPids, "processes the test started still running").toEqual([]);
    expect(leftDispatch, "processes or cgroups of the dispatches left behind").toBe(0);
  });
}

/**
 * Starts a trial of `row`. A single trial counts tried 1 and passed 1 once `pass()` is called; a test with
 * many trials sets the tally itself.
 */
export function trial(row: string, options: { many?: boolean } = {}) {
  const c: Current = {
    row,
    tally: { tried: 0, passed: 0, lost: 0, leftRunning: 0 },
    single: options.many !== true,
    passedSingle: false,
    notes: [],
    dispatchIds: [],
    pids: [],
    helpers: [],
    dirs: [],
    cleanups: [],
    lasts: [],
  };
  current = c;
  return {
    tally: c.tally,
    /** A measured figure worth printing with the row (a peak RSS, a duration). */
    note: (text: string) => {
      c.notes.push(text);
    },
    /** Marks a single trial as passed: call it last. */
    pass: () => {
      c.passedSingle = true;
    },
    /** Processes of this dispatch are reaped (and counted) after the test. */
    dispatch: (id: string) => {
      c.dispatchIds.push(id);
    },
    /** A pid the test started: killed after the test, and counted if still alive. */
    pid: (pid: number | undefined) => {
      if (pid !== undefined) c.pids.push(pid);
    },
    /** A helper process the test keeps alive on purpose (a sleeper): killed after the test, never counted. */
    helper: (pid: number) => {
      c.helpers.push(pid);
    },
    /** A temp folder of the test, removed after it. */
    dir: (prefix = "catherd-fault-") => {
      const dir = tempDir(prefix);
      c.dirs.push(dir);
      return dir;
    },
    cleanup: (fn: () => void | Promise<void>) => {
      c.cleanups.push(fn);
    },
    last: (fn: () => void) => {
      c.lasts.push(fn);
    },
  };
}
export type Trial = ReturnType<typeof trial>;

/** An isolated CATHERD_HOME inside a trial's temp folder, and the environment pointing at it. */
export function homeFor(t: Trial, extra: NodeJS.ProcessEnv = {}): { home: string; env: NodeJS.ProcessEnv } {
  const home = t.dir("catherd-fault-home-");
  return { home, env: { ...process.env, CATHERD_HOME: home, CATHERD_RUN: "", ...extra } };
}

/** Writes a fake-agent scenario file in the trial's temp folder. */
export function scenario(t: Trial, steps: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  const file = path.join(t.dir(), "scenario.json");
  fs.writeFileSync(file, JSON.stringify({ steps, ...extra }));
  return file;
}

export interface Dispatched {
  dispatchId: string;
  dir: string;
  name: string;
  supervisorPid: number;
}

/** `catherd dispatch --backend exec` of the fake agent, tracked by the trial; fails the test if refused. */
export async function dispatchFake(
  t: Trial,
  env: NodeJS.ProcessEnv,
  steps: Record<string, unknown>[],
  extra: string[] = [],
): Promise<Dispatched> {
  const result = await runCli(fakeDispatchArgs(scenario(t, steps), extra), { env, timeoutMs: 60_000 });
  expect(result.stderr, "dispatch printed an error").toBe("");
  expect(result.code).toBe(0);
  const d = dispatchedOf(result);
  t.dispatch(d.dispatchId);
  t.pid(d.supervisorPid);
  return d;
}

/** Parses a `--json` output, or the error it printed. */
export function jsonOf(result: CliResult): Record<string, unknown> {
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

/** Waits until a pid is gone (or a zombie). */
export function waitGone(pid: number, timeoutMs = 10_000): Promise<true> {
  return waitFor(`pid ${pid} to end`, () => (isAlive(pid) ? undefined : true), timeoutMs);
}

/** The process state letter of /proc/<pid>/stat (R, S, T, Z, …), or null when gone. */
export function procState(pid: number): string | null {
  return readProcStat(pid)?.state ?? null;
}

/** A field of /proc/<pid>/status in kB (VmHWM, VmRSS), or null. */
export function statusKb(pid: number, field: string): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m === null ? null : Number(m[1]);
  } catch {
    return null;
  }
}

/** How many file descriptors a process holds, or null. */
export function fdCount(pid: number): number | null {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

/** Starts `sleep 1000` in its own process group (the worst case for a group signal), tracked by the trial. */
export function startSleeper(t: Trial): number {
  const child = spawn("sleep", ["1000"], { detached: true, stdio: "ignore" });
  child.unref();
  const pid = child.pid as number;
  t.helper(pid);
  return pid;
}

/** Every file and folder under `root`, with its mode. */
export function walk(root: string): { file: string; dir: boolean; mode: number }[] {
  const out: { file: string; dir: boolean; mode: number }[] = [];
  const visit = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      const stat = fs.lstatSync(file);
      out.push({ file, dir: stat.isDirectory(), mode: stat.mode & 0o777 });
      if (stat.isDirectory()) visit(file);
    }
  };
  visit(root);
  return out;
}

/** A dispatch id for a folder made by hand: valid, unique, sorted like real ones. */
export function handId(): string {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  return `${stamp}-${Math.random().toString(36).slice(2, 8).padEnd(6, "0")}`;
}

/**
 * A dispatch folder written by hand inside a run (admit.json and spec.json as `dispatch` writes them, plus
 * any other files given), with its name's `latest`. Returns its folder and id.
 */
export function handDispatch(
  home: string,
  name: string,
  files: Record<string, unknown> = {},
  options: { admit?: boolean; run?: string } = {},
): { dir: string; id: string } {
  const id = handId();
  const run = options.run ?? "default";
  const nameDir = path.join(home, "runs", run, "dispatches", name);
  const dir = path.join(nameDir, id);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const admittedAt = new Date(Date.now() - 60_000).toISOString();
  const base: Record<string, unknown> = {
    "spec.json": {
      schema: 1,
      dispatchId: id,
      backend: "exec",
      cmd: "/bin/true",
      args: [],
      env: {},
      cwd: dir,
    },
  };
  if (options.admit !== false) {
    base["admit.json"] = {
      schema: 1,
      dispatchId: id,
      run,
      name,
      backend: "exec",
      model: null,
      cwd: dir,
      owns: [],
      admittedAt,
      dispatcher: { pid: 999_999, startTime: "1" },
      git: null,
    };
  }
  for (const [file, value] of Object.entries({ ...base, ...files })) {
    if (value === undefined) continue;
    fs.writeFileSync(path.join(dir, file), typeof value === "string" ? value : JSON.stringify(value), {
      mode: 0o600,
    });
  }
  fs.writeFileSync(path.join(nameDir, "latest"), `${id}\n`);
  return { dir, id };
}

/** Runs the real supervisor on `dir` with a preload that writes its VmHWM (kB) when it exits. */
export function superviseMeasured(
  t: Trial,
  dir: string,
): Promise<{ code: number | null; hwmKb: number; cpuSecs: number }> {
  const preload = path.join(t.dir(), "hwm.mjs");
  const out = path.join(path.dirname(preload), "hwm");
  // At exit the supervisor writes its peak memory and the CPU time it used: CPU time, unlike wall time,
  // does not grow when other trials load the machine.
  fs.writeFileSync(
    preload,
    `import fs from "node:fs";
process.on("exit", () => {
  const m = /VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));
  const cpu = process.cpuUsage();
  fs.writeFileSync(${JSON.stringify(out)}, (m ? m[1] : "0") + " " + (cpu.user + cpu.system) / 1e6);
});`,
  );
  const child = spawn(process.execPath, ["--import", preload, SUPERVISOR_MAIN, dir], { stdio: "ignore" });
  t.pid(child.pid);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the supervisor did not finish in 90 s")), 90_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      const [hwm, cpu] = fs.readFileSync(out, "utf8").split(" ");
      resolve({ code, hwmKb: Number(hwm), cpuSecs: Number(cpu) });
    });
  });
}

/**
 * Runs the rest of a trial alone among the trials that call this: the heavy ones (hundreds of processes,
 * gigabytes of events), on two cores two of which at once measure the machine, not catherd; and those
 * that time catherd against a second or so (adoption), which a heavy trial beside them would starve for
 * minutes. Other trials still run beside it.
 */
export async function heavy(t: Trial): Promise<void> {
  const lock = path.join(path.dirname(figuresFile()), "heavy.lock");
  const owner = path.join(lock, "owner");
  await waitFor(
    "the heavy-trial lock",
    () => {
      try {
        fs.mkdirSync(lock);
        fs.writeFileSync(owner, String(process.pid));
        return true;
      } catch {
        // A worker that vitest terminated (a trial past its time) never released it: its pid is gone.
        const holder = Number(readOr(owner, ""));
        if (holder > 0 && !isAlive(holder)) fs.rmSync(lock, { recursive: true, force: true });
        return undefined;
      }
    },
    900_000,
  );
  const release = () => fs.rmSync(lock, { recursive: true, force: true });
  t.last(release);
  // Also when a cleanup hangs past the hook's time and the kit's afterEach never reaches its lasts.
  onTestFinished(release);
}

function readOr(file: string, fallback: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return fallback;
  }
}
