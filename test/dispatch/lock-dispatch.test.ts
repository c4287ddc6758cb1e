import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GUIDE } from "../../src/cli/guide-command.js";
import { LOCK_HINT } from "../../src/dispatch/request/lock-hint.js";
import { dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { CLI_MAIN, readJson, reapAll, tempDir } from "../helpers/folders.js";
import { exitOf, reapLocks, startLock, trackCommand } from "../helpers/locks.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForJson, waitForLine } from "../helpers/wait.js";

// A `catherd lock` run by a dispatch's agent, through real processes: its wait for a slot is not idle
// time (nor wall), status and wait say what it does, the record says how long it waited, and a cancel
// ends the locks with the rest of the dispatch, leaving the slots free.

const dispatched: string[] = [];
const supervisors: number[] = [];

afterEach(() => {
  for (const pid of supervisors.splice(0)) killPid(pid);
  // Both reaped before either is judged: a failed expectation must not leave the other's processes.
  const dispatches = reapAll(dispatched.splice(0));
  const locks = reapLocks();
  expect(dispatches, "processes of the dispatches left running").toBe(0);
  expect(locks, "locks left running").toBe(0);
});

/** The shell words of `catherd lock -- <command…>` as an agent runs it. */
function lockWords(command: string): string {
  return `'${process.execPath}' '${CLI_MAIN}' lock -- ${command}`;
}

/** Dispatches an exec agent running `script` in sh; the one slot count comes from the environment. */
async function dispatchScript(env: NodeJS.ProcessEnv, name: string, script: string, extra: string[] = []) {
  const result = await runCli(
    [
      "dispatch",
      "--backend",
      "exec",
      "--json",
      "--name",
      name,
      "--kill-grace",
      "300ms",
      ...extra,
      "--",
      "/bin/sh",
      "-c",
      script,
    ],
    { env },
  );
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const d = dispatchedOf(result);
  dispatched.push(d.dispatchId);
  supervisors.push(d.supervisorPid);
  return d;
}

/** The one slot held by the test (outside any dispatch) until `go` exists. */
async function holdSlot(env: NodeJS.ProcessEnv, dir: string) {
  const go = path.join(dir, "go");
  const pidFile = path.join(dir, "holder");
  const holder = startLock(
    ["--", "/bin/sh", "-c", `echo $$ > '${pidFile}'; while [ ! -e '${go}' ]; do sleep 0.02; done`],
    env,
  );
  trackCommand(Number(await waitForLine(pidFile)));
  return { holder, go };
}

interface Row {
  name: string;
  state: string;
  heavy: { state: string; class: string; command: string; ahead: number | null } | null;
}

async function rowsOf(env: NodeJS.ProcessEnv): Promise<Row[]> {
  const status = await runCli(["status", "--json"], { env });
  return (JSON.parse(status.stdout) as { dispatches: Row[] }).dispatches;
}

/** The pid of the lock that reports in a dispatch folder (its report's name). */
function reportingLocks(dir: string): number[] {
  return fs
    .readdirSync(dir)
    .flatMap((name) => /^lock-(\d+)-/.exec(name)?.[1] ?? [])
    .map(Number);
}

describe("a lock under a dispatch", () => {
  it("waits 6 s for a slot under --idle 2s without being idle, status says so, and the record states the wait", async () => {
    const { env: base } = isolatedHome();
    const env = { ...base, CATHERD_LOCK_SLOTS: "1" };
    const dir = tempDir();
    const { holder, go } = await holdSlot(env, dir);
    const ran = path.join(dir, "ran");
    const slotsVar = path.join(dir, "slots-var");
    const d = await dispatchScript(
      env,
      "tests",
      `echo starting; echo "$CATHERD_LOCK_SLOTS" > ${slotsVar}; ${lockWords(`/bin/sh -c 'echo ran > ${ran}'`)}; echo done`,
      ["--idle", "2s"],
    );
    const waiting = await waitForRow(env, "tests", (r) => r.heavy?.state === "waiting");
    expect(waiting.heavy).toEqual({
      state: "waiting",
      class: "heavy",
      command: `/bin/sh -c "echo ran > ${ran}"`,
      ahead: 0,
      since: expect.any(String),
    });
    const text = await runCli(["status"], { env });
    expect(text.stdout).toMatch(/ tests +\w{6} exec +running +\S+ +- +heavy slot: next\n/);
    // Six seconds of waiting, three times the idle limit: the dispatch must still be running.
    const since = Date.now();
    await waitFor(
      "six seconds of waiting",
      () => {
        if (fs.existsSync(path.join(d.dir, "exit.json")))
          throw new Error("the dispatch ended while its lock waited");
        return Date.now() - since >= 6000 ? true : undefined;
      },
      30_000,
    );
    fs.writeFileSync(go, "");
    await exitOf(holder);
    const record = await waitForJson<Record<string, unknown>>(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok", reason: "exited" });
    expect(record.slotWaitMs).toBeGreaterThanOrEqual(6000);
    expect(record.slotWaitMs).toBeLessThan(60_000);
    expect(readJson(path.join(d.dir, "exit.json")).slotWaitMs).toBe(record.slotWaitMs);
    expect(fs.readFileSync(ran, "utf8")).toBe("ran\n");
    // The machine's count reached the agent (CATHERD_LOCK_SLOTS is kept), and its lock said so.
    expect(fs.readFileSync(slotsVar, "utf8")).toBe("1\n");
    expect(fs.readFileSync(path.join(d.dir, "stderr.log"), "utf8")).toContain(
      "catherd lock: waiting for a heavy slot: 1 of 1 held, 1 waiting\n",
    );
    expect(reportingLocks(d.dir)).toEqual([]);
    const show = await runCli(["show", "tests"], { env });
    expect(show.stdout).toMatch(/waited \d+s for heavy slots/);
  });

  // With the dispatch's cgroup where the machine gives one, and with the process group and the sweep alone.
  it.each([
    ["its cgroup", {}],
    ["its group and the sweep", { CATHERD_TEST_ONLY_NO_CGROUP: "1" }],
  ])(
    "ends a waiting lock and a running heavy command with their cancelled dispatches (%s), and frees the slots",
    async (_how, extra) => {
      const { home, env: base } = isolatedHome();
      const env = { ...base, ...extra, CATHERD_LOCK_SLOTS: "1" };
      const dir = tempDir();
      const cmdPidFile = path.join(dir, "heavy-pid");
      const bRan = path.join(dir, "b-ran");
      const a = await dispatchScript(
        env,
        "runs-heavy",
        lockWords(`/bin/sh -c 'echo $$ > ${cmdPidFile}; exec sleep 1000'`),
      );
      const heavyPid = trackCommand(Number(await waitForLine(cmdPidFile)));
      const b = await dispatchScript(env, "waits", lockWords(`/bin/touch ${bRan}`));
      await waitForRow(env, "waits", (r) => r.heavy?.state === "waiting");
      const rows = await waitForRow(env, "runs-heavy", (r) => r.heavy?.state === "running");
      expect(rows.heavy?.command).toBe(`/bin/sh -c "echo $$ > ${cmdPidFile}; exec sleep 1000"`);
      const status = await runCli(["status"], { env });
      expect(status.stdout).toMatch(/ runs-heavy .* heavy \d+\w*: \/bin\/sh/);
      expect(status.stdout).toMatch(/ waits .* heavy slot: next\n/);
      const shown = await runCli(["show", "runs-heavy"], { env });
      expect(shown.stdout).toMatch(/\nrunning a heavy command: \/bin\/sh -c "echo \$\$ > .*, \d+\w*\n/);
      const shownWaiting = await runCli(["show", "waits"], { env });
      expect(shownWaiting.stdout).toMatch(/\nwaiting for a heavy slot \(next\)\n/);
      // wait's snapshot (the MCP tool's too) says the same.
      const waited = await runCli(["wait", "runs-heavy", "waits", "--timeout", "1s", "--json"], { env });
      expect(waited.code).toBe(124);
      const doing = (JSON.parse(waited.stdout) as { running: { name: string; doing: string }[] }).running;
      expect(doing.find((s) => s.name === "waits")?.doing).toBe("waiting for a heavy slot (next)");
      expect(doing.find((s) => s.name === "runs-heavy")?.doing).toMatch(/^running a heavy command: /);
      // The heavy command is the dispatch's: in its cgroup (where the machine gives one), carrying its id.
      const cgroupOf = fs.readFileSync(`/proc/${heavyPid}/cgroup`, "utf8");
      const environ = fs.readFileSync(`/proc/${heavyPid}/environ`, "utf8").split("\0");
      expect(environ).toContain(`CATHERD_DISPATCH=${a.dispatchId}`);
      const locks = [...reportingLocks(a.dir), ...reportingLocks(b.dir)];
      expect(locks).toHaveLength(2);
      // The waiter first: cancelling the holder first would hand the waiter its slot.
      for (const d of [b, a]) {
        const cancelled = await runCli(["cancel", d.name, "--wait", "--json"], { env, timeoutMs: 30_000 });
        expect(cancelled.code).toBe(0);
      }
      for (const d of [a, b]) {
        expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({
          status: "cancelled",
          reason: "cancelled",
        });
      }
      const containment = readJson(path.join(a.dir, "exit.json")).containment;
      if ("CATHERD_TEST_ONLY_NO_CGROUP" in extra) expect(containment).toBe("group+sweep");
      if (containment === "cgroup") expect(cgroupOf).toContain(a.dispatchId);
      expect(isAlive(heavyPid)).toBe(false);
      for (const pid of locks) expect(isAlive(pid), `lock ${pid}`).toBe(false);
      expect(fs.existsSync(bRan)).toBe(false);
      const slots = await runCli(["lock", "--status", "--json"], { env });
      expect(JSON.parse(slots.stdout)).toMatchObject({
        lock: { classes: [{ class: "heavy", holders: [], waiters: [] }] },
      });
      const next = await runCli(["lock", "--wait", "5s", "--", "/bin/true"], { env });
      expect(next).toEqual({ code: 0, stdout: "", stderr: "" });
      expect(fs.existsSync(path.join(home, "locks", "heavy"))).toBe(true);
    },
  );
});

describe("telling agents to use catherd lock", () => {
  it("adds the hint after the brief's own bytes with --lock-hint, and refuses it for exec", async () => {
    const { env: base } = isolatedHome();
    const codex = fakeCli(tempDir(), "codex", [{ lines: recordedLines("codex", "text"), exit: 0 }]);
    const env = { ...base, CATHERD_CODEX_BIN: codex };
    const brief = "Make npm test pass.";
    const result = await runCli(
      ["dispatch", "--backend", "codex", "--name", "hinted", "--brief", brief, "--lock-hint", "--json"],
      { env },
    );
    expect(result.code).toBe(0);
    const d = dispatchedOf(result);
    dispatched.push(d.dispatchId);
    supervisors.push(d.supervisorPid);
    expect(fs.readFileSync(path.join(d.dir, "brief.md"), "utf8")).toBe(`${brief}\n\n${LOCK_HINT}\n`);
    expect(LOCK_HINT).toContain("catherd lock -- <command>");
    await waitForJson(path.join(d.dir, "record.json"), 30_000);
    const plain = await runCli(
      ["dispatch", "--backend", "codex", "--name", "plain", "--brief", brief, "--json"],
      {
        env,
      },
    );
    const p = dispatchedOf(plain);
    dispatched.push(p.dispatchId);
    supervisors.push(p.supervisorPid);
    expect(fs.readFileSync(path.join(p.dir, "brief.md"), "utf8")).toBe(brief);
    const exec = await runCli(["dispatch", "--backend", "exec", "--lock-hint", "--", "/bin/true"], { env });
    expect(exec.code).toBe(2);
    expect(exec.stderr).toContain("error E_INPUT_INVALID: --lock-hint adds a line for an agent to read");
    await waitForJson(path.join(p.dir, "record.json"), 30_000);
  });

  it("has the guide tell orchestrators to wrap test suites and builds in catherd lock, and to give lockHint", () => {
    expect(GUIDE).toContain("## Heavy commands");
    expect(GUIDE).toContain("catherd lock -- <command> (catherd lock -- npm test)");
    expect(GUIDE).toContain("Give lockHint (--lock-hint)");
  });
});

/** Polls `status --json` until the dispatch's row passes `test`. */
async function waitForRow(env: NodeJS.ProcessEnv, name: string, test: (row: Row) => boolean): Promise<Row> {
  let found: Row | undefined;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    found = (await rowsOf(env)).find((r) => r.name === name);
    if (found !== undefined && test(found)) return found;
  }
  throw new Error(`status never showed ${name} as expected: ${JSON.stringify(found)}`);
}
