import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchedOf, fakeDispatchArgs, isolatedHome, json, runCli } from "../helpers/cli.js";
import { fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { readJson, reapAll, tempDir } from "../helpers/folders.js";
import { isAlive, killPid, reapDispatch, waitForPause } from "../helpers/processes.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

// --notify and --run-notify with real processes (specs/dispatch-folder.md, "notify.json"): the command
// runs once per dispatch (a chain: once, at its end), with the record's facts in its environment and the
// record on stdin, whoever records the dispatch; a command that hangs is stopped at its timeout and
// changes nothing but notify.log.

const dispatched: string[] = [];

afterEach(() => {
  const left =
    reapAll(dispatched.splice(0)) + dispatchedNotifiers.splice(0).reduce((n, id) => n + reapDispatch(id), 0);
  expect(left, "processes left running").toBe(0);
});

/** The CATHERD_DISPATCH values of the notifiers the tests may have started. */
const dispatchedNotifiers: string[] = [];

/** A notify command that appends one line of what it was given to `out`, and keeps its stdin beside it. */
function probe(out: string, tag = "n"): string {
  return `cat > "${out}.$$.stdin"; printf '%s|%s|%s|%s|%s|%s\\n' ${tag} "$CATHERD_NAME" "$CATHERD_STATUS" "$CATHERD_KIND" "$CATHERD_RECORD" "$$" >> "${out}"`;
}

function lines(file: string): string[] {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean) : [];
}

/**
 * Pids of notifier programs working on `dir` (their argv names it). A child the notifier has forked but
 * not yet exec'd (its command, starting) shows the notifier's argv for that instant: it is left out.
 */
function notifiersOf(dir: string): number[] {
  const pids: number[] = [];
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (argv.some((a) => a.endsWith("notifier.js")) && argv.includes(dir) && isAlive(Number(entry))) {
        pids.push(Number(entry));
        const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
        parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      }
    } catch {
      // gone meanwhile
    }
  }
  return pids.filter((pid) => !pids.includes(parents.get(pid) ?? -1));
}

/** Waits until the notification of `dir` is over: its log says how each command ended, its notifier is gone. */
async function notificationDone(dir: string, commands = 1): Promise<string> {
  const log = path.join(dir, "notify.log");
  await waitFor(`${commands} command(s) ended in ${log}`, () => {
    const text = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
    const ended = text.split("\n").filter((l) => / (exit code|killed by|timed out|could not start)/.test(l));
    return ended.length >= commands && notifiersOf(dir).length === 0 ? text : undefined;
  });
  return fs.readFileSync(log, "utf8");
}

function scenario(steps: Record<string, unknown>[]): string {
  const file = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(file, JSON.stringify({ steps }));
  return file;
}

describe("--notify and --run-notify", () => {
  it("runs the command once when the dispatch is recorded, with the record's facts and the record on stdin", async () => {
    const { env } = isolatedHome();
    const out = path.join(tempDir(), "calls");
    const result = await runCli(
      fakeDispatchArgs(scenario([{ out: "hi" }, { exit: 3 }]), ["--name", "n1", "--notify", probe(out)]),
      { env },
    );
    expect(result.code, result.stderr).toBe(0);
    const d = dispatchedOf(result);
    dispatched.push(d.dispatchId);
    dispatchedNotifiers.push(`${d.dispatchId}.notify`);
    const log = await notificationDone(d.dir);
    expect(log).toMatch(/--notify of the dispatch: exit code 0 after \d+ ms/);
    // Every reader after it starts nothing more.
    for (const verb of ["status", "wait", "result"])
      await runCli([verb, ...(verb === "status" ? [] : ["n1"])], { env });
    expect(notifiersOf(d.dir)).toEqual([]);
    const calls = lines(out);
    expect(calls).toHaveLength(1);
    const [tag, name, status, kind, record, pid] = (calls[0] as string).split("|");
    expect([tag, name, status, kind, record]).toEqual([
      "n",
      "n1",
      "failed",
      "cli",
      path.join(d.dir, "record.json"),
    ]);
    expect(JSON.parse(fs.readFileSync(`${out}.${pid}.stdin`, "utf8"))).toEqual(
      readJson(path.join(d.dir, "record.json")),
    );
    expect(readJson(path.join(d.dir, "notify.json"))).toMatchObject({ schema: 1, commands: ["dispatch"] });
  });

  it("remembers --run-notify in run.json for every dispatch of the run, beside a dispatch's own, until none", async () => {
    const { env, home } = isolatedHome();
    const out = path.join(tempDir(), "calls");
    const first = dispatchedOf(
      await runCli(
        fakeDispatchArgs(scenario([{ out: "a" }]), ["--name", "a", "--run-notify", probe(out, "run")]),
        {
          env,
        },
      ),
    );
    dispatched.push(first.dispatchId);
    dispatchedNotifiers.push(`${first.dispatchId}.notify`);
    await notificationDone(first.dir);
    expect(readJson(path.join(home, "runs/default/run.json"))).toMatchObject({ notify: probe(out, "run") });

    const second = dispatchedOf(
      await runCli(
        fakeDispatchArgs(scenario([{ out: "b" }]), ["--name", "b", "--notify", probe(out, "own")]),
        {
          env,
        },
      ),
    );
    dispatched.push(second.dispatchId);
    dispatchedNotifiers.push(`${second.dispatchId}.notify`);
    await notificationDone(second.dir, 2);

    const third = dispatchedOf(
      await runCli(fakeDispatchArgs(scenario([{ out: "c" }]), ["--name", "c", "--run-notify", "none"]), {
        env,
      }),
    );
    dispatched.push(third.dispatchId);
    await runCli(["wait", "c"], { env });
    expect(readJson(path.join(home, "runs/default/run.json")).notify).toBeNull();
    expect(fs.existsSync(path.join(third.dir, "notify.json"))).toBe(false);
    expect(lines(out).map((l) => l.split("|").slice(0, 3).join("|"))).toEqual([
      "run|a|ok",
      "own|b|ok",
      "run|b|ok",
    ]);
  });

  it("refuses an empty command before anything is written", async () => {
    const { env, home } = isolatedHome();
    const result = await runCli(fakeDispatchArgs(scenario([]), ["--notify", "  "]), { env });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout).error).toMatchObject({
      code: "E_INPUT_INVALID",
      message: '--notify "  ": it is a shell command line of at most 8 KiB, not blank, without NUL',
    });
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
  });

  it("delays nothing: the supervisor exits and wait returns while the command still runs", async () => {
    const { env } = isolatedHome();
    const go = path.join(tempDir(), "go");
    const done = path.join(tempDir(), "done");
    const d = dispatchedOf(
      await runCli(
        fakeDispatchArgs(scenario([{ out: "x" }]), [
          "--name",
          "slow",
          "--notify",
          `while [ ! -e "${go}" ]; do sleep 0.05; done; echo "$CATHERD_STATUS" > "${done}"`,
        ]),
        { env },
      ),
    );
    dispatched.push(d.dispatchId);
    dispatchedNotifiers.push(`${d.dispatchId}.notify`);
    const waited = await runCli(["wait", "slow", "--json"], { env });
    expect(waited.code, waited.stderr).toBe(0);
    const supervisor = readJson(path.join(d.dir, "supervisor.json")).pid as number;
    await waitFor("the supervisor to exit", () => (isAlive(supervisor) ? undefined : true));
    expect(fs.existsSync(done)).toBe(false);
    expect(notifiersOf(d.dir)).toHaveLength(1);
    fs.writeFileSync(go, "");
    expect((await waitForFile(done)).trim()).toBe("ok");
    await notificationDone(d.dir);
    expect(readJson(path.join(d.dir, "record.json")).status).toBe("ok");
  });

  it("stops a command that hangs at its timeout, with everything it started, and leaves the record as it was", async () => {
    const { env } = isolatedHome();
    const pids = path.join(tempDir(), "pids");
    const d = dispatchedOf(
      await runCli(
        fakeDispatchArgs(scenario([{ out: "x" }]), [
          "--name",
          "hang",
          "--notify",
          `setsid sleep 1000 & echo $! >> "${pids}"; sleep 1000 & echo $! >> "${pids}"; echo waiting; exec sleep 1000`,
        ]),
        { env: { ...env, CATHERD_NOTIFY_TIMEOUT_MS: "1000" } },
      ),
    );
    dispatched.push(d.dispatchId);
    dispatchedNotifiers.push(`${d.dispatchId}.notify`);
    await runCli(["wait", "hang"], { env });
    const before = fs.readFileSync(path.join(d.dir, "record.json"), "utf8");
    const log = await notificationDone(d.dir);
    expect(log).toMatch(
      /waiting\n.*--notify of the dispatch: timed out after \d+ ms: stopped \(SIGTERM, SIGKILL, 1 swept\)/,
    );
    const started = lines(pids).map(Number);
    expect(started).toHaveLength(2);
    await waitFor("its processes to be gone", () => (started.some(isAlive) ? undefined : true));
    expect(reapDispatch(`${d.dispatchId}.notify`)).toBe(0);
    expect(fs.readFileSync(path.join(d.dir, "record.json"), "utf8")).toBe(before);
  });

  it("runs once when the supervisor died between exit.json and record.json and a reader recorded it", async () => {
    const { env } = isolatedHome();
    const out = path.join(tempDir(), "calls");
    const d = dispatchedOf(
      await runCli(fakeDispatchArgs(scenario([{ out: "x" }]), ["--name", "k", "--notify", probe(out)]), {
        env: { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "exited" },
      }),
    );
    dispatched.push(d.dispatchId);
    dispatchedNotifiers.push(`${d.dispatchId}.notify`);
    const paused = await waitForPause(d.dir, "exited");
    expect(paused).toBe(readJson(path.join(d.dir, "supervisor.json")).pid);
    killPid(paused);
    await waitFor("the paused supervisor to die", () => (isAlive(paused) ? undefined : true));
    const status = await runCli(["status", "--json"], { env });
    expect(json<{ dispatches: { state: string }[] }>(status).dispatches[0]?.state).toBe("recorded");
    await notificationDone(d.dir);
    await runCli(["status"], { env });
    expect(notifiersOf(d.dir)).toEqual([]);
    expect(lines(out).map((l) => l.split("|").slice(0, 3).join("|"))).toEqual(["n|k|ok"]);
  });

  it("runs once when supervisor and agent were killed and a reader recorded the dispatch lost", async () => {
    const { env } = isolatedHome();
    const out = path.join(tempDir(), "calls");
    const ready = path.join(tempDir(), "ready");
    const d = dispatchedOf(
      await runCli(
        fakeDispatchArgs(scenario([{ touch: ready }, { hang: true }]), [
          "--name",
          "lost",
          "--notify",
          probe(out),
        ]),
        { env },
      ),
    );
    dispatched.push(d.dispatchId);
    dispatchedNotifiers.push(`${d.dispatchId}.notify`);
    await waitForFile(ready);
    const proc = await waitFor("proc.json", () =>
      fs.existsSync(path.join(d.dir, "proc.json")) ? readJson(path.join(d.dir, "proc.json")) : undefined,
    );
    killPid(readJson(path.join(d.dir, "supervisor.json")).pid as number);
    process.kill(-(proc.pgid as number), "SIGKILL");
    await waitFor("the agent to die", () => (isAlive(proc.pid as number) ? undefined : true));
    await runCli(["status"], { env });
    await notificationDone(d.dir);
    await runCli(["status"], { env });
    expect(lines(out).map((l) => l.split("|").slice(0, 4).join("|"))).toEqual(["n|lost|lost|lost"]);
  });

  it("is started by the reader that finds a recorded dispatch's live marker still there (its recorder died first)", async () => {
    const { env, home } = isolatedHome();
    const out = path.join(tempDir(), "calls");
    const d = dispatchedOf(
      await runCli(fakeDispatchArgs(scenario([{ out: "x" }]), ["--name", "m", "--notify", probe(out)]), {
        env,
      }),
    );
    dispatched.push(d.dispatchId);
    dispatchedNotifiers.push(`${d.dispatchId}.notify`);
    await notificationDone(d.dir);
    // The folder as a recorder killed between its record and the notifier leaves it.
    fs.rmSync(path.join(d.dir, "notify.json"));
    const marker = path.join(home, "runs/default/live", `${d.dispatchId}.json`);
    fs.writeFileSync(
      marker,
      JSON.stringify({
        schema: 1,
        dispatchId: d.dispatchId,
        name: "m",
        dir: d.dir,
        owns: [],
        backend: "exec",
      }),
    );
    // Admission looks at the live markers: the stale one is removed, and the notification started.
    dispatched.push(
      dispatchedOf(await runCli(fakeDispatchArgs(scenario([]), ["--name", "other"]), { env })).dispatchId,
    );
    await runCli(["wait", "other"], { env });
    expect(fs.existsSync(marker)).toBe(false);
    await waitFor("the second call", () => (lines(out).length === 2 ? true : undefined));
    await notificationDone(d.dir);
    expect(lines(out)).toHaveLength(2);
  });

  it("runs once for a chain, when its last attempt is recorded", async () => {
    const { env: base } = isolatedHome();
    const bins = tempDir();
    const codex = fakeCli(bins, "codex", [{ lines: recordedLines("codex", "quota"), exit: 1 }]);
    const claude = fakeCli(bins, "claude", [{ lines: recordedLines("claude", "text"), exit: 0 }]);
    const env = { ...base, CATHERD_CODEX_BIN: codex, CATHERD_CLAUDE_BIN: claude };
    const out = path.join(tempDir(), "calls");
    const first = json<{ dispatched: { dispatchId: string; dir: string } }>(
      await runCli(
        [
          "dispatch",
          "--backend",
          "codex",
          "--name",
          "ch",
          "--brief",
          "hi",
          "--fallback",
          "claude-code",
          "--notify",
          probe(out),
          "--json",
        ],
        { env },
      ),
    ).dispatched;
    dispatched.push(first.dispatchId);
    const waited = json<{ records: { dispatchId: string; status: string; attempt: number }[] }>(
      await runCli(["wait", "ch", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 }),
    );
    const last = waited.records[0];
    expect(last).toMatchObject({ status: "ok", attempt: 2 });
    const lastDir = path.join(path.dirname(first.dir), last?.dispatchId ?? "");
    dispatched.push(last?.dispatchId ?? "");
    dispatchedNotifiers.push(`${last?.dispatchId}.notify`, `${first.dispatchId}.notify`);
    await notificationDone(lastDir);
    expect(fs.existsSync(path.join(first.dir, "notify.json"))).toBe(false);
    expect(lines(out).map((l) => l.split("|").slice(0, 5).join("|"))).toEqual([
      `n|ch|ok||${path.join(lastDir, "record.json")}`,
    ]);
  });
});
