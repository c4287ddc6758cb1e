import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/folders.js";
import {
  classDirOf,
  exitOf,
  type LockProcess,
  mostAtOnce,
  notesOf,
  notingCommand,
  reapLocks,
  startLock,
  trackCommand,
  waitUntilWaiting,
} from "../helpers/locks.js";
import { isAlive } from "../helpers/processes.js";
import { waitFor, waitForFile, waitForLine } from "../helpers/wait.js";

// `catherd lock` through real processes: the slots hold, first come first served, a dead holder frees
// its slot at once, --wait gives up cleanly, signals end a wait or reach the command, bad input takes
// nothing.

afterEach(() => {
  expect(reapLocks(), "locks or commands left running").toBe(0);
});

/** `lock --status --json` of a home: each class's holders and waiters. */
async function statusOf(env: NodeJS.ProcessEnv) {
  const result = await runCli(["lock", "--status", "--json"], { env });
  expect(result.code).toBe(0);
  return (
    JSON.parse(result.stdout) as {
      lock: {
        classes: { class: string; slots: number; holders: { pid: number }[]; waiters: { pid: number }[] }[];
      };
    }
  ).lock.classes;
}

/** A lock holding the one slot of `--slots 1` until `go` exists; resolves once its command runs. */
async function holdSlot(env: NodeJS.ProcessEnv, dir: string, extra: string[] = []) {
  const go = path.join(dir, "go-holder");
  const pidFile = path.join(dir, "holder-cmd");
  const holder = startLock(
    [
      "--slots",
      "1",
      ...extra,
      "--",
      "/bin/sh",
      "-c",
      `echo $$ > '${pidFile}'; while [ ! -e '${go}' ]; do sleep 0.02; done`,
    ],
    env,
  );
  const commandPid = trackCommand(Number(await waitForLine(pidFile)));
  return { holder, go, commandPid };
}

describe("catherd lock: the slots", () => {
  it("runs six at once two at a time, each once, its output untouched and its exit code passed through", async () => {
    const { env } = isolatedHome();
    const notes = path.join(tempDir(), "notes");
    const locks = Array.from({ length: 6 }, (_, i) =>
      startLock(["--slots", "2", "--", ...notingCommand(notes, String(i), { ms: 300, code: 10 + i })], env),
    );
    const exits = await Promise.all(locks.map((lock) => exitOf(lock)));
    expect(exits.map((e) => e.code)).toEqual([10, 11, 12, 13, 14, 15]);
    const lines = notesOf(notes);
    expect(mostAtOnce(lines)).toBe(2);
    for (let i = 0; i < 6; i++) {
      expect(lines.filter((l) => l === `start ${i}`)).toHaveLength(1);
      expect(lines.filter((l) => l === `end ${i}`)).toHaveLength(1);
    }
    // Nothing on stdout but the commands' own; at most one line each on stderr, saying it waited (behind
    // earlier waiters a slot may be free for a moment: "1 of 2 held").
    for (const lock of locks) {
      expect(lock.stdout()).toBe("");
      expect(lock.stderr()).toMatch(
        /^(catherd lock: waiting for a heavy slot: [12] of 2 held, \d waiting\n)?$/,
      );
    }
    const [heavy] = await statusOf(env);
    expect(heavy).toMatchObject({ class: "heavy", holders: [], waiters: [] });
  });

  it("serves the waiters in the order they asked", async () => {
    const { env } = isolatedHome();
    const dir = tempDir();
    const notes = path.join(dir, "notes");
    const go = (i: number) => path.join(dir, `go-${i}`);
    const locks: LockProcess[] = [];
    for (let i = 0; i < 6; i++) {
      const lock = startLock(["--slots", "2", "--", ...notingCommand(notes, String(i), { go: go(i) })], env);
      locks.push(lock);
      // Each asks once the one before is in the queue: the first two hold, the rest wait in turn.
      if (i < 2)
        await waitFor(`start ${i}`, () => (notesOf(notes).includes(`start ${i}`) ? true : undefined));
      else await waitUntilWaiting(lock);
    }
    const [queued] = await statusOf(env);
    expect(queued?.holders.map((h) => h.pid)).toEqual([locks[0]?.pid, locks[1]?.pid]);
    expect(queued?.waiters.map((w) => w.pid)).toEqual(locks.slice(2).map((l) => l.pid));
    // Each holder let go in turn makes room for exactly the next in line.
    for (let i = 0; i < 6; i++) {
      fs.writeFileSync(go(i), "");
      await exitOf(locks[i] as LockProcess);
      if (i + 2 < 6) {
        await waitFor(`start ${i + 2}`, () => (notesOf(notes).includes(`start ${i + 2}`) ? true : undefined));
      }
    }
    expect(notesOf(notes).filter((l) => l.startsWith("start "))).toEqual(
      ["0", "1", "2", "3", "4", "5"].map((i) => `start ${i}`),
    );
  });

  it("says a class has the slots its holders took them under, not only the count a taker given none uses", async () => {
    const { env } = isolatedHome();
    const dir = tempDir();
    const notes = path.join(dir, "notes");
    const go = path.join(dir, "go");
    // A count no default reaches, so that the holders' count is what shows on any machine.
    const locks = [0, 1].map((i) =>
      startLock(["--slots", "4096", "--", ...notingCommand(notes, String(i), { go })], env),
    );
    await waitFor("both to hold", () =>
      notesOf(notes).filter((l) => l.startsWith("start ")).length === 2 ? true : undefined,
    );
    const [heavy] = await statusOf(env);
    expect(heavy).toMatchObject({ class: "heavy", slots: 4096 });
    expect(heavy?.holders).toHaveLength(2);
    const text = await runCli(["lock", "--status"], { env });
    expect(text.stdout.split("\n")[0]).toMatch(
      /^heavy: 4096 slots \(--slots 4096 of a holder; \d+ for a taker given none\), 2 held, 0 waiting$/,
    );
    fs.writeFileSync(go, "");
    for (const lock of locks) expect((await exitOf(lock)).code).toBe(0);
  });

  it("passes stdin, stdout and stderr through, and takes the count from CATHERD_LOCK_SLOTS", async () => {
    const { env } = isolatedHome();
    const lock = startLock(
      ["--", "/bin/sh", "-c", "cat; echo to-stderr >&2"],
      { ...env, CATHERD_LOCK_SLOTS: "3" },
      {
        stdin: "line one\nline two\n",
      },
    );
    expect((await exitOf(lock)).code).toBe(0);
    expect(lock.stdout()).toBe("line one\nline two\n");
    expect(lock.stderr()).toBe("to-stderr\n");
    // The count CATHERD_LOCK_SLOTS gave is kept for the takers given none.
    const [heavy] = await statusOf(env);
    expect(heavy?.slots).toBe(3);
  });
});

describe("catherd lock: a holder that dies", () => {
  it("frees the slot at once for the next waiter when the holder and its command are SIGKILLed", async () => {
    const { env } = isolatedHome();
    const dir = tempDir();
    const { holder, commandPid } = await holdSlot(env, dir);
    const ran = path.join(dir, "ran");
    const waiter = startLock(["--slots", "1", "--", "/bin/sh", "-c", `date +%s%N > '${ran}'`], env);
    await waitUntilWaiting(waiter);
    // The lock alone killed: its command still runs, so its slot stays held.
    process.kill(holder.pid, "SIGKILL");
    // Its output pipes stay open in its command: wait for the process, not for them.
    await waitFor("the holder to die", () => (isAlive(holder.pid) ? undefined : true));
    expect(isAlive(commandPid)).toBe(true);
    expect(fs.existsSync(ran)).toBe(false);
    const killedAt = Date.now();
    process.kill(commandPid, "SIGKILL");
    // The next command notes the time it started (date's nanoseconds since the epoch).
    const startedAt = Number(await waitForLine(ran)) / 1e6;
    expect(startedAt - killedAt, "ms from the kill to the next command's start").toBeLessThan(1000);
    expect((await exitOf(waiter)).code).toBe(0);
  });
});

describe("catherd lock --wait", () => {
  it("gives up with E_LOCK_BUSY (exit 75) after about that long, having run nothing and left the queue", async () => {
    const { env } = isolatedHome();
    const dir = tempDir();
    const { holder, go } = await holdSlot(env, dir);
    const ran = path.join(dir, "ran");
    const begun = Date.now();
    const busy = await runCli(["lock", "--slots", "1", "--wait", "1s", "--json", "--", "/bin/touch", ran], {
      env,
    });
    const took = Date.now() - begun;
    expect(busy.code).toBe(75);
    expect(JSON.parse(busy.stdout)).toMatchObject({ error: { code: "E_LOCK_BUSY" } });
    expect(busy.stderr).toBe("catherd lock: waiting for a heavy slot: 1 of 1 held, 1 waiting\n");
    expect(took).toBeGreaterThanOrEqual(1000);
    expect(took).toBeLessThan(8000);
    expect(fs.existsSync(ran)).toBe(false);
    const [heavy] = await statusOf(env);
    expect(heavy?.holders.map((h) => h.pid)).toEqual([holder.pid]);
    expect(heavy?.waiters).toEqual([]);
    fs.writeFileSync(go, "");
    expect((await exitOf(holder)).code).toBe(0);
  });
});

describe("catherd lock: signals", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)(
    "%s while it waits: it leaves the queue and exits %i, having run nothing",
    async (signal, code) => {
      const { env } = isolatedHome();
      const dir = tempDir();
      const { holder, go } = await holdSlot(env, dir);
      const ran = path.join(dir, "ran");
      const waiter = startLock(["--slots", "1", "--", "/bin/touch", ran], env);
      await waitUntilWaiting(waiter);
      process.kill(waiter.pid, signal);
      expect(await exitOf(waiter)).toEqual({ code, signal: null });
      expect(waiter.stderr()).toContain(
        `error E_INTERRUPTED: interrupted (${signal}) while waiting for a heavy slot`,
      );
      const [heavy] = await statusOf(env);
      expect(heavy?.waiters).toEqual([]);
      fs.writeFileSync(go, "");
      await exitOf(holder);
      expect(fs.existsSync(ran)).toBe(false);
    },
  );

  it("passes SIGTERM on to the running command's group and exits with the command's status", async () => {
    const { env } = isolatedHome();
    const dir = tempDir();
    const got = path.join(dir, "got");
    const pidFile = path.join(dir, "pid");
    // The command traps SIGTERM and exits 7; a child of it (same group) is ended by the signal too.
    const lock = startLock(
      [
        "--",
        "/bin/sh",
        "-c",
        `trap 'echo term > "${got}"; exit 7' TERM; sleep 1000 & echo "$$ $!" > '${pidFile}'; wait`,
      ],
      env,
    );
    const [shell, child] = (await waitForLine(pidFile)).split(" ").map(Number);
    trackCommand(shell as number);
    trackCommand(child as number);
    // Until the child has exec'd sleep it runs the shell's code with the shell's trap: a signal then is
    // caught there and lost at the exec. Signal once it is sleep.
    await waitFor("the command's child to be sleep", () =>
      fs.readFileSync(`/proc/${child}/cmdline`, "utf8").startsWith("sleep\0") ? true : undefined,
    );
    process.kill(lock.pid, "SIGTERM");
    expect(await exitOf(lock)).toEqual({ code: 7, signal: null });
    expect(await waitForFile(got)).toBe("term\n");
    await waitFor("the command's child to end", () => (isAlive(child as number) ? undefined : true));
    const [heavy] = await statusOf(env);
    expect(heavy?.holders).toEqual([]);
  });

  it("exits 128 + n when the command dies of the signal", async () => {
    const { env } = isolatedHome();
    const pidFile = path.join(tempDir(), "pid");
    const lock = startLock(["--", "/bin/sh", "-c", `echo $$ > '${pidFile}'; exec sleep 1000`], env);
    trackCommand(Number(await waitForLine(pidFile)));
    process.kill(lock.pid, "SIGTERM");
    expect(await exitOf(lock)).toEqual({ code: 143, signal: null });
  });
});

describe("catherd lock --status", () => {
  it("lists each class's holders, with their command and dispatch, and its waiters", async () => {
    const { env } = isolatedHome();
    const dir = tempDir();
    const { holder, go } = await holdSlot(env, dir, ["--class", "build"]);
    const waiter = startLock(["--slots", "1", "--class", "build", "--", "/bin/true"], env);
    await waitUntilWaiting(waiter);
    expect(waiter.stderr()).toBe("catherd lock: waiting for a build slot: 1 of 1 held, 1 waiting\n");
    const text = await runCli(["lock", "--status"], { env });
    expect(text.code).toBe(0);
    const lines = text.stdout.split("\n");
    expect(lines[0]).toBe("build: 1 slot, 1 held, 1 waiting");
    expect(lines[1]).toMatch(new RegExp(`^  held +pid ${holder.pid} +\\S+ +/bin/sh -c `));
    expect(lines[2]).toMatch(new RegExp(`^  waiting +pid ${waiter.pid} +\\S+ +/bin/true$`));
    const only = await runCli(["lock", "--status", "--class", "heavy", "--json"], { env });
    expect(JSON.parse(only.stdout)).toEqual({
      lock: { classes: [{ class: "heavy", slots: 1, defaultSlots: 1, holders: [], waiters: [] }] },
    });
    fs.writeFileSync(go, "");
    await exitOf(holder);
    expect((await exitOf(waiter)).code).toBe(0);
  });
});

describe("catherd lock: bad input takes no slot", () => {
  const { home, env } = isolatedHome();
  it.each([
    [["--slots", "0", "--", "/bin/true"], /--slots "0" is not a whole number/],
    [["--slots", "-1", "--", "/bin/true"], /--slots/],
    [["--slots", "abc", "--", "/bin/true"], /--slots "abc" is not a whole number/],
    [["--wait", "5x", "--", "/bin/true"], /--wait "5x" is not a duration/],
    [["--class", "../x", "--", "/bin/true"], /--class "..\/x" is not a valid id/],
    [[], /no command to run after --/],
    [["--"], /no command to run after --/],
    [["/bin/true"], /unexpected argument "\/bin\/true"/],
    [["--", "no-such-command-here"], /command "no-such-command-here" is not found on PATH/],
  ])("%j is E_INPUT_INVALID, exit 2", async (args, message) => {
    const result = await runCli(["lock", ...args], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error E_INPUT_INVALID: /);
    expect(result.stderr).toMatch(message);
    expect(fs.existsSync(path.join(home, "locks"))).toBe(false);
  });

  it("refuses a bad CATHERD_LOCK_SLOTS by name", async () => {
    const result = await runCli(["lock", "--", "/bin/true"], { env: { ...env, CATHERD_LOCK_SLOTS: "many" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('CATHERD_LOCK_SLOTS "many" is not a whole number');
  });

  it("answers a corrupt or unreadable queue with E_FILE_CORRUPT / E_IO_READ naming it, and runs nothing", async () => {
    const { home: own, env: ownEnv } = isolatedHome();
    const ran = path.join(tempDir(), "ran");
    const dir = classDirOf(own);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "state.3.json"), "{ torn");
    const corrupt = await runCli(["lock", "--", "/bin/touch", ran], { env: ownEnv });
    expect(corrupt.code).toBe(1);
    expect(corrupt.stderr).toContain(
      `error E_FILE_CORRUPT: ${path.join(dir, "state.3.json")} is not valid JSON`,
    );
    const unreadable = classDirOf(own, "build");
    fs.writeFileSync(unreadable, "a file where the class's folder belongs");
    const io = await runCli(["lock", "--class", "build", "--", "/bin/touch", ran], { env: ownEnv });
    expect(io.code).toBe(1);
    expect(io.stderr).toContain(`error E_IO_READ: cannot read the slot queue ${unreadable}`);
    expect(fs.existsSync(ran)).toBe(false);
  });
});
