import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchedOf, fakeDispatchArgs, isolatedHome, runCli } from "../helpers/cli.js";
import { readJson, reapAll, tempDir } from "../helpers/folders.js";
import { isAlive, killPid, waitForPause } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// A real dispatch's supervisor.log names the phases of its supervisor's life, in order (specs/supervisor.md,
// "Phases"): to the record, when cancelled, and across an adoption after its supervisor died.

const dispatched: string[] = [];
const supervisors: number[] = [];

afterEach(async () => {
  // Every supervisor the test made is gone before its temp folders are: a red test leaves none either.
  for (const pid of supervisors.splice(0)) killPid(pid);
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

/** The phases supervisor.log names, in the order of its lines; any line out of order fails the test. */
function phasesOf(dir: string): string[] {
  const lines = fs
    .readFileSync(path.join(dir, "supervisor.log"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { event: string; phase?: string });
  expect(lines.filter((line) => line.event === "phase-out-of-order")).toEqual([]);
  return lines.filter((line) => line.event === "phase").map((line) => line.phase as string);
}

const TO_THE_RECORD = ["stopping", "exited", "recorded", "after-record"];

/** `catherd dispatch` of the fake agent on `steps`. */
async function dispatchFake(env: NodeJS.ProcessEnv, steps: Record<string, unknown>[], name: string) {
  const scenario = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(scenario, JSON.stringify({ steps }));
  const result = await runCli(fakeDispatchArgs(scenario, ["--name", name]), { env, timeoutMs: 60_000 });
  expect(result.code, result.stderr).toBe(0);
  const d = dispatchedOf(result);
  dispatched.push(d.dispatchId);
  supervisors.push(d.supervisorPid);
  return d;
}

async function gone(pid: number) {
  await waitFor(`supervisor ${pid} to exit`, () => (isAlive(pid) ? undefined : true), 30_000);
}

describe("supervisor.log names the supervisor's phases", () => {
  it("in order, from the claim to after the record, for a dispatch that ends by itself", async () => {
    const { env } = isolatedHome();
    const d = await dispatchFake(env, [{ out: "working" }, { exit: 0 }], "phases-ok");
    expect(await waitForJson(path.join(d.dir, "record.json"), 30_000)).toMatchObject({ status: "ok" });
    await gone(d.supervisorPid);
    const phases = phasesOf(d.dir);
    expect(phases).toEqual(["given", "claimed", "started", "watching", ...TO_THE_RECORD]);
  });

  it("in order for a dispatch cancelled while it is watched", async () => {
    const { env } = isolatedHome();
    const d = await dispatchFake(env, [{ out: "working" }, { hang: true }], "phases-cancel");
    const log = path.join(d.dir, "supervisor.log");
    await waitFor("the watch to begin", () =>
      fs.existsSync(log) && phasesOf(d.dir).includes("watching") ? true : undefined,
    );
    const cancelled = await runCli(["cancel", d.name, "--wait", "--json"], { env, timeoutMs: 30_000 });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({ status: "cancelled" });
    await gone(d.supervisorPid);
    const phases = phasesOf(d.dir);
    expect(phases).toEqual(["given", "claimed", "started", "watching", ...TO_THE_RECORD]);
  });

  it("for the supervisor that died and then for its adopter, each life in order", async () => {
    const { env } = isolatedHome();
    const go = path.join(tempDir(), "go");
    const d = await dispatchFake(
      { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "watching" },
      [{ out: "working" }, { waitFor: go }, { exit: 0 }],
      "phases-adopted",
    );
    await waitForPause(d.dir, "watching", 30_000);
    killPid(d.supervisorPid);
    await gone(d.supervisorPid);
    const status = await runCli(["status", "--json"], { env, timeoutMs: 30_000 });
    expect(status.code, status.stderr).toBe(0);
    const adopter = readJson(path.join(d.dir, "supervisor.json")) as { pid: number; adoptions: number };
    supervisors.push(adopter.pid);
    expect(adopter.adoptions).toBe(1);
    fs.writeFileSync(go, "");
    // An exec agent the adopter did not spawn ends with its exit code unknown: failed (supervisor.md).
    expect(await waitForJson(path.join(d.dir, "record.json"), 30_000)).toMatchObject({
      status: "failed",
      reason: "exited",
    });
    await gone(adopter.pid);
    const phases = phasesOf(d.dir);
    expect(phases).toEqual([
      "given",
      "claimed",
      "started",
      "watching",
      "given",
      "adopted",
      "watching",
      ...TO_THE_RECORD,
    ]);
  });
});
