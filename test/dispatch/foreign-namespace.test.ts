import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hostIdentity } from "../../src/infra/host-identity.js";
import { dispatchedOf, fakeDispatchArgs, isolatedHome, runCli } from "../helpers/cli.js";
import { readJson, reapAll, tempDir } from "../helpers/folders.js";
import { otherNamespaceUnavailable, runInOtherNamespace } from "../helpers/other-namespace.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// A reader in another PID and UTS namespace (`unshare --pid --uts --fork --mount-proc`: a container that
// shares the home, standing in for another host) looking at a dispatch that runs here. Its /proc holds
// none of our processes. specs/placement.md, "Identity across hosts": such a reader judges the supervisor
// by its lock only (hostRelation `other`, no engine for a local dispatch), and never signals a pid of ours.

const why = otherNamespaceUnavailable();
if (why !== null) console.warn(`skipping the foreign-namespace reader tests: ${why}`);

const dispatched: string[] = [];
const supervisors: number[] = [];

afterEach(() => {
  for (const pid of supervisors.splice(0)) killPid(pid);
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

describe.skipIf(why !== null)("a reader in another PID namespace", () => {
  it("records the hosts of the dispatcher, the supervisor and the agent", async () => {
    const { env } = isolatedHome();
    const go = path.join(tempDir(), "go");
    const d = await dispatch(env, [{ waitFor: go }, { exit: 0 }]);
    await waitForJson(path.join(d.dir, "proc.json"));
    const host = hostIdentity();
    expect(readJson(path.join(d.dir, "admit.json")).dispatcher).toMatchObject({ host });
    expect(readJson(path.join(d.dir, "supervisor.json"))).toMatchObject({ pid: d.supervisorPid, host });
    expect(readJson(path.join(d.dir, "proc.json"))).toMatchObject({ host });
    fs.writeFileSync(go, "");
    await waitForJson(path.join(d.dir, "record.json"));
  });

  // The bug of specs/placement.md ("The bug today"): a reader whose /proc lacks the supervisor took the live
  // dispatch for lost and recorded it, and the real supervisor's exit.json then said the agent exited 0.
  // Its relation to the supervisor's host is `other`: it judges by the lock, which is fresh.
  it("sees a live local dispatch running by its lock, records nothing and signals nothing", async () => {
    const { env } = isolatedHome();
    const go = path.join(tempDir(), "go");
    const d = await dispatch(env, [{ waitFor: go }, { out: "done" }, { exit: 0 }]);
    const proc = await waitForJson(path.join(d.dir, "proc.json"));

    const status = await runInOtherNamespace(["status", "--json"], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(rowOf(status.stdout, d.dispatchId)).toMatchObject({ state: "running", undecided: null });
    const show = await runInOtherNamespace(["show", d.dir, "--json"], { env });
    expect(JSON.parse(show.stdout).dispatch).toMatchObject({ state: "running", duty: null });
    expect(fs.existsSync(path.join(d.dir, "exit.json"))).toBe(false);
    expect(fs.existsSync(path.join(d.dir, "record.json"))).toBe(false);
    expect(isAlive(d.supervisorPid), "the supervisor").toBe(true);
    expect(isAlive(proc.pid as number), "the agent").toBe(true);

    fs.writeFileSync(go, "");
    await waitFor("the supervisor's end", () => (isAlive(d.supervisorPid) ? undefined : true));
    expect(readJson(path.join(d.dir, "exit.json"))).toMatchObject({ reason: "exited", code: 0 });
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({ status: "ok" });
  });

  it("cancels a live local dispatch from there: the cancel file, which its supervisor acts on", async () => {
    const { env } = isolatedHome();
    const d = await dispatch(env, [{ out: "working" }, { hang: true }]);
    await waitForJson(path.join(d.dir, "proc.json"));
    const cancel = await runInOtherNamespace(["cancel", d.dir, "--wait", "--json"], { env });
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(JSON.parse(cancel.stdout).cancelled).toMatchObject({ state: "recorded", status: "cancelled" });
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({
      status: "cancelled",
      reason: "cancelled",
    });
  });

  // A supervisor dead with a stale lock cannot be told from one alive elsewhere without an engine to ask:
  // the reader there says unknown and why, and records nothing; a reader on its host records it lost.
  it("leaves a dead supervisor with a stale lock unknown, for a reader on its host to record", async () => {
    const { env } = isolatedHome();
    const d = await dispatch(env, [{ out: "working" }, { hang: true }]);
    const proc = await waitForJson(path.join(d.dir, "proc.json"));
    killPid(d.supervisorPid);
    killPid(proc.pid as number);
    await waitFor("both ended", () =>
      isAlive(d.supervisorPid) || isAlive(proc.pid as number) ? undefined : true,
    );
    // The lock's last refresh, a minute ago: stale (30 s) without waiting for it.
    const lock = path.join(d.dir, "supervisor.lock");
    const minuteAgo = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, minuteAgo, minuteAgo);

    const status = await runInOtherNamespace(["status", "--json"], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(rowOf(status.stdout, d.dispatchId)).toMatchObject({
      state: "unknown",
      undecided: expect.stringMatching(/lock is stale.*only a reader on its host can tell/),
    });
    expect(fs.existsSync(path.join(d.dir, "exit.json"))).toBe(false);

    const here = await runCli(["status", "--json"], { env });
    expect(rowOf(here.stdout, d.dispatchId)).toMatchObject({ state: "recorded", status: "lost" });
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({
      status: "lost",
      error: { code: "E_SUPERVISOR_LOST" },
    });
  });
});

/** status --json's row of one dispatch. */
function rowOf(stdout: string, dispatchId: string): Record<string, unknown> | undefined {
  const rows = (JSON.parse(stdout) as { dispatches: Record<string, unknown>[] }).dispatches;
  return rows.find((r) => r.dispatchId === dispatchId);
}

async function dispatch(env: NodeJS.ProcessEnv, steps: Record<string, unknown>[]) {
  const scenario = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(scenario, JSON.stringify({ steps }));
  const result = await runCli(fakeDispatchArgs(scenario), { env });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const d = dispatchedOf(result);
  dispatched.push(d.dispatchId);
  supervisors.push(d.supervisorPid);
  return d;
}
