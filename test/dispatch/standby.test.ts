import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { launchSupervisor } from "../../src/dispatch/start/launch.js";
import { removeLeftovers, startStandbySupervisor } from "../../src/dispatch/start/standby.js";
import { dispatchedOf, dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";
import { CLI_MAIN, FAKE_AGENT, reapAll, SUPERVISOR_MAIN, tempDir } from "../helpers/folders.js";
import { isAlive, killPid, standbysOf, waitForPause } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// The standby supervisor (src/dispatch/start/standby.ts): started by `dispatch` before it admits, given the
// folder once admitted, and gone without a trace whenever it gets none.

const dispatched: string[] = [];
const homes: string[] = [];
const started: number[] = [];

afterEach(() => {
  const left = homes.splice(0).flatMap(standbysOf);
  for (const pid of [...left, ...started.splice(0)]) killPid(pid);
  expect(reapAll(dispatched.splice(0)), "agents left running").toBe(0);
  expect(left, "standby supervisors left running").toEqual([]);
});

function home() {
  const h = isolatedHome();
  homes.push(h.home);
  return h;
}

const standbyFiles = (home: string) =>
  fs.existsSync(home) ? fs.readdirSync(home).filter((name) => name.startsWith(".standby-")) : [];

function hangScenario(): string {
  const file = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(file, JSON.stringify({ steps: [{ out: "busy" }, { hang: true }] }));
  return file;
}

describe("the standby supervisor", () => {
  it("becomes the dispatch's supervisor: the pid dispatch names, its output moved to supervisor.out", async () => {
    const { home: h, env } = home();
    const r = await runCli(
      ["dispatch", "--backend", "exec", "--json", "--", process.execPath, FAKE_AGENT, hangScenario()],
      { env },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const d = dispatchedOf(r);
    dispatched.push(d.dispatchId);
    const argv = fs.readFileSync(`/proc/${d.supervisorPid}/cmdline`, "utf8").split("\0");
    expect(argv).toContain("--standby");
    expect(fs.existsSync(path.join(d.dir, "supervisor.out"))).toBe(true);
    expect(standbyFiles(h)).toEqual([]);
    fs.writeFileSync(path.join(d.dir, "cancel"), "test");
    const record = await waitForJson(path.join(d.dir, "record.json"), 20_000);
    expect(record.status).toBe("cancelled");
    await waitFor("the supervisor exited", () => (isAlive(d.supervisorPid) ? undefined : true));
  }, 30_000);

  it("exits without a trace when the dispatch is refused", async () => {
    const { home: h, env } = home();
    const r = await runCli(["dispatch", "--backend", "exec", "--idle", "soon", "--json", "--", "true"], {
      env,
    });
    expect(JSON.parse(r.stdout).error.code).toBe("E_INPUT_INVALID");
    await waitFor("standby gone", () =>
      standbysOf(h).length === 0 && standbyFiles(h).length === 0 ? true : undefined,
    );
    expect(fs.existsSync(path.join(h, "runs"))).toBe(false);
  }, 30_000);

  it("exits without a trace when its dispatcher is killed before it was given a folder", async () => {
    const { home: h, env } = home();
    // The dispatcher blocks reading the brief from stdin, after it started its standby.
    const dispatcher = spawn(
      process.execPath,
      [CLI_MAIN, "dispatch", "--backend", "exec", "--brief-file", "-", "--", "true"],
      { env, stdio: ["pipe", "ignore", "ignore"] },
    );
    started.push(dispatcher.pid as number);
    const standby = await waitFor("a standby", () => standbysOf(h)[0]);
    dispatcher.kill("SIGKILL");
    await waitFor("standby gone", () => (isAlive(standby) || standbyFiles(h).length > 0 ? undefined : true));
  }, 30_000);

  it("is replaced by a fresh supervisor when it ended before it was given a folder", async () => {
    const h = tempDir();
    const quitter = path.join(tempDir(), "quitter.mjs");
    fs.writeFileSync(quitter, "process.exit(0);\n");
    const standby = startStandbySupervisor(h, { program: quitter });
    expect(standby).not.toBeNull();
    if (standby === null) return;
    await waitFor("the standby ended", () => standby.ended() ?? undefined);
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, "spec.json"), JSON.stringify({ schema: 1, cmd: "true" }));
    const launched = await launchSupervisor(dir, { program: SUPERVISOR_MAIN, standby });
    const pid = launched.placement === "local" ? launched.pid : -1;
    started.push(pid);
    expect(pid).not.toBe(standby.child.pid);
    expect(standbyFiles(h)).toEqual([]);
    // The replacement is a standby too, given the folder as it starts: one life, beginning at `given`.
    expect(fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")).toContain("--standby");
    await waitForJson(path.join(dir, "record.json"), 20_000);
    expect(fs.readFileSync(path.join(dir, "supervisor.log"), "utf8")).toContain('"phase":"given"');
  }, 30_000);

  it("given no folder, removes only its own output file, never a folder's supervisor.out", async () => {
    const dir = tempDir();
    const out = path.join(dir, "supervisor.out");
    fs.writeFileSync(out, "what an earlier supervisor printed\n");
    // A standby whose output goes to a file not its own .standby-*.out, and whose pipe closes empty.
    const child = spawn(process.execPath, [SUPERVISOR_MAIN, "--standby", out], {
      stdio: ["pipe", "ignore", "ignore"],
    });
    started.push(child.pid as number);
    child.stdin.end();
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code).toBe(0);
    expect(fs.readFileSync(out, "utf8")).toBe("what an earlier supervisor printed\n");
  }, 30_000);
});

describe("the hand-over", () => {
  it("is one write: a dispatcher SIGKILLed as soon as supervisor.out is in the folder leaves it supervised", async () => {
    const { home: h, env } = home();
    fs.mkdirSync(h, { recursive: true }); // a home that exists: the dispatcher starts a standby first
    const scenario = path.join(tempDir(), "scenario.json");
    fs.writeFileSync(scenario, JSON.stringify({ steps: [{ out: "working" }, { exit: 0 }] }));
    const dispatcher = spawn(
      process.execPath,
      [CLI_MAIN, "dispatch", "--backend", "exec", "--json", "--", process.execPath, FAKE_AGENT, scenario],
      // Paused once it has its folder, so that its dispatcher still waits for it when it is killed.
      { env: { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "given" }, detached: true, stdio: "ignore" },
    );
    const dispatcherPid = dispatcher.pid as number;
    started.push(dispatcherPid);
    const ended = new Promise((resolve) => dispatcher.once("exit", resolve));
    // The earliest sign of the hand-over seen from outside (it once came before the folder was given).
    const dir = await waitFor("supervisor.out in a dispatch folder", () =>
      dispatchFolders(h).find((d) => fs.existsSync(path.join(d, "supervisor.out"))),
    );
    process.kill(-dispatcherPid, "SIGKILL");
    await ended;
    dispatched.push(path.basename(dir));
    process.kill(await waitForPause(dir, "given", 20_000), "SIGCONT");
    const record = await waitForJson(path.join(dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok" });
    expect(fs.readFileSync(path.join(dir, "supervisor.log"), "utf8")).toContain('"phase":"given"');
    const supervisor = JSON.parse(fs.readFileSync(path.join(dir, "supervisor.json"), "utf8")).pid as number;
    started.push(supervisor);
    await waitFor("the supervisor exited", () => (isAlive(supervisor) ? undefined : true));
  }, 60_000);
});

describe("the supervisor's claim", () => {
  it("lets dispatch return once supervisor.json names it, before it has loaded its backend or started the agent", async () => {
    const { env } = home();
    // Frozen right after supervisor.json, before it imports the rest of itself (supervisor/supervise.ts).
    const paused = { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "claimed" };
    const r = await runCli(
      ["dispatch", "--backend", "exec", "--json", "--", process.execPath, FAKE_AGENT, hangScenario()],
      { env: paused },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const d = dispatchedOf(r);
    dispatched.push(d.dispatchId);
    started.push(d.supervisorPid);
    expect(await waitForPause(d.dir, "claimed", 20_000)).toBe(d.supervisorPid);
    const named = JSON.parse(fs.readFileSync(path.join(d.dir, "supervisor.json"), "utf8"));
    expect(named.pid).toBe(d.supervisorPid);
    expect(fs.existsSync(path.join(d.dir, "proc.json"))).toBe(false);
    process.kill(d.supervisorPid, "SIGCONT");
    await waitForJson(path.join(d.dir, "proc.json"), 20_000);
    fs.writeFileSync(path.join(d.dir, "cancel"), "test");
    const record = await waitForJson(path.join(d.dir, "record.json"), 20_000);
    expect(record.status).toBe("cancelled");
    await waitFor("the supervisor exited", () => (isAlive(d.supervisorPid) ? undefined : true));
  }, 40_000);
});

describe("leftover standby files", () => {
  it("are removed when their dispatcher is gone, and kept while it runs", () => {
    const h = tempDir();
    const gone = spawn(process.execPath, ["-e", ""]);
    const deadPid = gone.pid as number;
    const stale = path.join(h, `.standby-${deadPid}-abc123.out`);
    const live = path.join(h, `.standby-${process.pid}-abc123.out`);
    const other = path.join(h, ".standby-notes");
    return new Promise<void>((resolve) => gone.once("exit", () => resolve())).then(() => {
      for (const file of [stale, live, other]) fs.writeFileSync(file, "");
      removeLeftovers(h);
      expect(fs.readdirSync(h).sort()).toEqual([path.basename(other), path.basename(live)].sort());
    });
  });
});
