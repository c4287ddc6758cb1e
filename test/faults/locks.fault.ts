import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ADMISSION_LOCK_STALE_MS } from "../../src/dispatch/admission.js";
import { SUPERVISOR_LOCK_STALE_MS } from "../../supervisor/supervise.js";
import { type CliResult, dispatchFolders, runCli } from "../helpers/cli.js";
import { CLI_MAIN, readJson } from "../helpers/folders.js";
import { holdAdmissionLock } from "../helpers/lock-holder.js";
import { waitForPause } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";
import {
  CROWD,
  dispatchFake,
  heavy,
  homeFor,
  jsonOf,
  procState,
  type Trial,
  trial,
  useFaultKit,
  waitGone,
} from "./kit.js";

// Row 6: locks. Admission under the run's lock with 100 dispatchers at once and with dispatchers
// SIGKILLed mid-admission; the supervisor lock when its holder is frozen past its stale time.

useFaultKit();

const REFUSALS = ["E_ADMIT_CAPACITY", "E_ADMIT_DUPLICATE", "E_IO_LOCK"];

/** An agent that waits (cheaply, in sh) for a go-ahead file, then exits 0. */
/**
 * An agent that waits for the test's go-ahead. It looks once a second: sixty of them looking ten times a
 * second fork 600 `sleep`s a second, which on two cores starves the admissions the trial measures.
 */
function waitingAgent(go: string): string[] {
  return ["--", "/bin/sh", "-c", `while [ ! -e '${go}' ]; do sleep 1; done; echo done`];
}

function errorCode(r: CliResult): string | null {
  try {
    return (jsonOf(r).error as { code: string } | undefined)?.code ?? null;
  } catch {
    return `unparsable: ${r.stdout.slice(0, 200)} ${r.stderr.slice(0, 200)}`;
  }
}

/** Every dispatch folder of the home is whole (brief/spec/admit) and ends with exactly one record. */
async function allRecorded(t: Trial, home: string, env: NodeJS.ProcessEnv, timeoutMs = 60_000) {
  const folders = dispatchFolders(home);
  for (const dir of folders) t.dispatch(path.basename(dir));
  await waitFor(
    "every dispatch recorded",
    () => (folders.every((dir) => fs.existsSync(path.join(dir, "record.json"))) ? true : undefined),
    timeoutMs,
  );
  const status = await runCli(["status", "--all", "--json"], { env });
  expect(status.code).toBe(0);
  return folders.map((dir) => ({
    dir,
    files: fs.readdirSync(dir),
    record: readJson(path.join(dir, "record.json")),
  }));
}

/** Row 6's cap: 60% of the crowd is admitted, the rest refused for capacity. */
const CAP = Math.round(CROWD * 0.6);

describe("row 6: admission under the run's lock", () => {
  it(`admits or clearly refuses each of ${CROWD} simultaneous dispatches into one run, and loses none`, async () => {
    const t = trial(`6 ${CROWD} parallel dispatches into one run (cap ${CAP})`, { many: true });
    await heavy(t);
    const { home, env } = homeFor(t);
    const go = path.join(t.dir(), "go");
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: CROWD }, (_, i) =>
        runCli(
          [
            "dispatch",
            "--backend",
            "exec",
            "--name",
            `p${i}`,
            "--max-parallel",
            String(CAP),
            "--json",
            ...waitingAgent(go),
          ],
          { env, timeoutMs: 120_000 },
        ),
      ),
    );
    const admitSecs = (Date.now() - started) / 1000;
    fs.writeFileSync(go, "go");
    const admitted = results.filter((r) => r.code === 0);
    const refused = results.filter((r) => r.code !== 0);
    const codes = refused.map(errorCode);
    t.tally.tried = results.length;
    const records = await allRecorded(t, home, env, 90_000);
    const ok = records.filter((r) => r.record.status === "ok");
    t.tally.lost = records.filter((r) => r.record.status === "lost").length;
    t.tally.passed = ok.length + codes.filter((c) => c !== null && REFUSALS.includes(c)).length;
    t.note(
      `${admitted.length} admitted, ${refused.length} refused (${[...new Set(codes)].join(", ")}), admission took ${admitSecs.toFixed(1)} s`,
    );
    expect(codes.filter((c) => c === null || !REFUSALS.includes(c))).toEqual([]);
    expect(admitted).toHaveLength(CAP);
    expect(records).toHaveLength(admitted.length);
    for (const r of records) {
      expect(r.files).toEqual(
        expect.arrayContaining(["spec.json", "admit.json", "exit.json", "record.json"]),
      );
    }
    expect(
      records
        .filter((r) => r.record.status !== "ok")
        .map((r) => `${r.dir}: ${JSON.stringify(r.record.error)}`),
    ).toEqual([]);
  });

  it("survives dispatchers SIGKILLed mid-admission: no half-written dispatch is recorded, the next one is admitted", async () => {
    const t = trial("6 dispatchers SIGKILLed mid-admission (20 spread, 10 in the lock queue)", {
      many: true,
    });
    await heavy(t);
    const { home, env } = homeFor(t);
    const runDir = path.join(home, "runs", "default");
    const dispatcher = (name: string) => {
      const child = spawn(
        process.execPath,
        [CLI_MAIN, "dispatch", "--backend", "exec", "--name", name, "--brief", "hello", "--", "/bin/true"],
        { env, stdio: "ignore" },
      );
      t.pid(child.pid);
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once("exit", (_code, signal) => resolve(signal)),
      );
      return { child, exited };
    };

    // 20 dispatchers, SIGKILLed at moments spread over a dispatcher's life: start-up, the lock, the writes,
    // the launch. Where each one was when it died depends on the machine's speed.
    const killed: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const { child, exited } = dispatcher(`k${i}`);
        await new Promise((resolve) => setTimeout(resolve, 100 + i * 75));
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGKILL");
          killed.push(child.pid as number);
        }
        await exited;
      }),
    );

    // 10 dispatchers that certainly die mid-admission: the run's lock is held (by a stand-in that then
    // dies holding it, as a dispatcher would), each has written its staging folder with brief.md and
    // spec.json and waits for the lock, and is SIGKILLed there.
    fs.mkdirSync(runDir, { recursive: true });
    const holder = await holdAdmissionLock(runDir, ADMISSION_LOCK_STALE_MS);
    t.pid(holder.pid);
    const queued = Array.from({ length: 10 }, (_, i) => ({ name: `q${i}`, ...dispatcher(`q${i}`) }));
    const stagedOf = (name: string) =>
      dispatchFolders(home).filter(
        (d) => path.basename(path.dirname(d)) === name && fs.existsSync(path.join(d, "spec.json")),
      );
    await waitFor(
      "every queued dispatcher to stage its folder",
      () => (queued.every((q) => stagedOf(q.name).length === 1) ? true : undefined),
      60_000,
    );
    for (const q of queued) {
      expect(q.child.exitCode, `${q.name} still waiting for the lock`).toBeNull();
      q.child.kill("SIGKILL");
      expect(await q.exited).toBe("SIGKILL");
    }
    holder.kill("SIGKILL");
    await waitGone(holder.pid as number);
    t.tally.tried = 30;

    // A lock a killed dispatcher held is taken over once stale (5 s): the next dispatch gets in.
    const started = Date.now();
    const next = await runCli(
      ["dispatch", "--backend", "exec", "--name", "after", "--json", "--", "/bin/true"],
      {
        env,
        timeoutMs: 40_000,
      },
    );
    const waited = Date.now() - started;
    expect(next.code, next.stdout + next.stderr).toBe(0);
    expect(waited).toBeLessThan(ADMISSION_LOCK_STALE_MS + 10_000);
    // Readers over the debris: folders with admit.json end recorded (lost when their supervisor never came,
    // after the 15 s start grace); folders without it are not dispatches and are never recorded.
    const all = dispatchFolders(home);
    for (const dir of all) t.dispatch(path.basename(dir).replace(/^\.(.*)\.admitting$/, "$1"));
    const staging = all.filter((d) => path.basename(d).startsWith("."));
    const folders = all.filter((d) => !staging.includes(d));
    const admitted = folders.filter((d) => fs.existsSync(path.join(d, "admit.json")));
    const partial = folders.filter((d) => !fs.existsSync(path.join(d, "admit.json")));
    expect(partial, "visible folders without admit.json").toEqual([]);
    const queuedNames = new Set(queued.map((q) => q.name));
    const queuedStaging = staging.filter((d) => queuedNames.has(path.basename(path.dirname(d))));
    expect(queuedStaging, "the queued dispatchers' staging folders, left hidden").toHaveLength(10);
    expect(
      folders.filter((d) => queuedNames.has(path.basename(path.dirname(d)))),
      "a visible folder of a dispatcher killed in the lock queue",
    ).toEqual([]);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !admitted.every((d) => fs.existsSync(path.join(d, "record.json")))) {
      await runCli(["status", "--all", "--json"], { env });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const status = await runCli(["status", "--all", "--json"], { env });
    expect(status.code).toBe(0);
    for (const d of [...partial, ...staging])
      expect(fs.existsSync(path.join(d, "record.json")), `${d} was recorded`).toBe(false);
    const unrecorded = admitted.filter((d) => !fs.existsSync(path.join(d, "record.json")));
    t.tally.lost = unrecorded.length;
    t.tally.passed = 30 - unrecorded.length;
    const rows = (jsonOf(status) as { dispatches: { dir: string }[] }).dispatches.map((r) => r.dir);
    expect(
      rows.filter((dir) => staging.includes(dir)),
      "staging folders shown by status",
    ).toEqual([]);
    const spreadAdmitted = admitted.filter((d) => path.basename(path.dirname(d)).startsWith("k")).length;
    t.note(
      `spread: ${killed.length} killed (${20 - killed.length} finished first), ${spreadAdmitted - (20 - killed.length)} after admit.json, ${staging.length - 10} while writing (hidden staging folders); queued: 10 killed waiting for the lock; next dispatch waited ${(waited / 1000).toFixed(1)} s`,
    );
    expect(unrecorded).toEqual([]);
    expect(fs.existsSync(path.join(runDir, "admission.lock"))).toBe(false);
  });
});

/** Waits until a lock directory has not been refreshed for `staleMs` (its holder is frozen). */
function waitStale(lock: string, staleMs: number) {
  return waitFor(
    `${lock} to go stale`,
    () => {
      try {
        return Date.now() - fs.statSync(lock).mtimeMs > staleMs + 500 ? true : undefined;
      } catch {
        return undefined;
      }
    },
    staleMs + 15_000,
  );
}

describe("row 6: the supervisor lock and a frozen supervisor", () => {
  it("never runs the agent twice when a supervisor is frozen past the lock's stale time and then continued", async () => {
    const t = trial("6 supervisor SIGSTOPped past the 30 s stale time, then SIGCONT", { many: true });
    const { env } = homeFor(t);
    const variant = async (name: string, pauseAt: string | null) => {
      const go = path.join(t.dir(), "go");
      const d = await dispatchFake(
        t,
        pauseAt === null ? env : { ...env, CATHERD_TEST_ONLY_PAUSE_AT: pauseAt },
        [{ out: "started" }, { waitFor: go }, { exit: 0 }],
        ["--name", name],
      );
      if (pauseAt === null) {
        await waitForJson(path.join(d.dir, "proc.json"));
        process.kill(d.supervisorPid, "SIGSTOP");
        await waitFor("the supervisor to be stopped", () =>
          procState(d.supervisorPid) === "T" ? true : undefined,
        );
      } else {
        await waitForPause(d.dir, pauseAt);
      }
      await waitStale(path.join(d.dir, "supervisor.lock"), SUPERVISOR_LOCK_STALE_MS);
      // A reader sees it running (the frozen supervisor is alive), and a second supervisor bows out.
      const status = jsonOf(await runCli(["status", "--json"], { env })) as {
        dispatches: { name: string; state: string }[];
      };
      expect(status.dispatches.find((r) => r.name === name)?.state).toBe("running");
      const second = await runCli(["supervise", d.dir], { env, timeoutMs: 20_000 });
      expect(second.code).toBe(0);
      process.kill(d.supervisorPid, "SIGCONT");
      fs.writeFileSync(go, "go");
      await waitGone(d.supervisorPid, 30_000);
      const record = await waitForJson(path.join(d.dir, "record.json"));
      expect(record).toMatchObject({ status: "ok" });
      expect(fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8")).toBe("started\n");
      const log = fs.readFileSync(path.join(d.dir, "supervisor.log"), "utf8");
      expect(log.match(/"event":"spawned"/g)).toHaveLength(1);
      expect(log).toContain("already-supervised");
      expect(fs.readFileSync(path.join(d.dir, "supervisor.out"), "utf8")).toBe("");
      return log.includes("lock-compromised");
    };
    t.tally.tried = 2;
    const [midRun, beforeSpawn] = await Promise.all([
      variant("frozen-running", null),
      variant("frozen-early", "before-spawn"),
    ]);
    t.tally.passed = 2;
    t.note(`lock-compromised logged: mid-run ${midRun}, before spawn ${beforeSpawn}`);
  });
});
