import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { findByDispatchVariable } from "../../src/infra/sweep.js";
import { dispatchedOf, runCli } from "../helpers/cli.js";
import { readJson } from "../helpers/folders.js";
import { isAlive, killPid, waitForPause } from "../helpers/processes.js";
import { waitFor, waitForFile, waitForJson } from "../helpers/wait.js";
import { homeFor, jsonOf, type Trial, trial, useFaultKit, waitGone } from "./kit.js";

// Row 17c: the supervisor of a sandboxed dispatch SIGKILLed at each moment of its start (specs/sandbox.md,
// "A supervisor's death while the sandbox goes up"), frozen there by CATHERD_TEST_ONLY_PAUSE_AT. Until the
// agent is named in proc.json and let through its sandbox's gate it never runs, and the dispatch is
// recorded lost; from then on it is adopted. Never an orphan nobody can adopt: the sandbox's PID namespace
// ends every process of it (the bridge's listeners too) with its agent.

useFaultKit();

/** The moments of a sandboxed start, in order, and whether the agent has run by then. */
const MOMENTS = [
  { phase: "before-spawn", ran: false },
  { phase: "sandbox-raised", ran: false },
  { phase: "sandbox-starting", ran: false },
  { phase: "after-spawn", ran: false },
  { phase: "started", ran: false },
  { phase: "watching", ran: true },
] as const;

interface Started {
  dir: string;
  dispatchId: string;
  supervisorPid: number;
  marker: string;
  go: string;
  readerEnv: NodeJS.ProcessEnv;
}

/** A files+net dispatch (the bridge runs) whose agent says it started, then waits for `go`. */
async function sandboxedAt(t: Trial, phase: string, name: string): Promise<Started> {
  const { env } = homeFor(t, { CATHERD_TEST_ONLY_PAUSE_AT: phase });
  const marker = path.join(t.dir(), "agent-started");
  const go = path.join(t.dir(), "go");
  const result = await runCli(
    [
      "dispatch",
      "--backend",
      "exec",
      "--name",
      name,
      "--json",
      "--kill-grace",
      "500ms",
      "--cwd",
      t.dir(),
      "--sandbox",
      "files+net",
      "--allow-write",
      path.dirname(marker),
      "--",
      "/bin/sh",
      "-c",
      `echo started > ${marker}; while [ ! -e ${go} ]; do sleep 0.05; done`,
    ],
    { env, timeoutMs: 60_000 },
  );
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const d = dispatchedOf(result);
  t.dispatch(d.dispatchId);
  t.pid(d.supervisorPid);
  await waitForPause(d.dir, phase, 30_000);
  return {
    dir: d.dir,
    dispatchId: d.dispatchId,
    supervisorPid: d.supervisorPid,
    marker,
    go,
    readerEnv: { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "" },
  };
}

async function killSupervisor(s: Started): Promise<void> {
  killPid(s.supervisorPid);
  await waitGone(s.supervisorPid);
}

async function recordOf(s: Started, name: string): Promise<Record<string, unknown>> {
  const waited = await runCli(["wait", name, "--timeout", "60s", "--json"], {
    env: s.readerEnv,
    timeoutMs: 70_000,
  });
  return (jsonOf(waited) as { records: Record<string, unknown>[] }).records[0] ?? {};
}

describe("row 17c: a sandboxed start whose supervisor dies", () => {
  for (const m of MOMENTS) {
    it(`the supervisor SIGKILLed at ${m.phase}: ${m.ran ? "adopted, and recorded ok" : "the agent never runs, recorded lost"}`, async () => {
      const t = trial(`17c sandboxed start, supervisor SIGKILLed at ${m.phase}`);
      const name = `sandboxed-${m.phase}`;
      const s = await sandboxedAt(t, m.phase, name);
      if (m.ran) await waitForFile(s.marker);
      await killSupervisor(s);
      const status = jsonOf(await runCli(["status", "--json"], { env: s.readerEnv })) as {
        dispatches: { state: string; status: string | null }[];
      };
      const seen = status.dispatches[0];
      expect(seen?.state, JSON.stringify(seen)).not.toBe("orphaned");
      const adopter = m.ran ? (readJson(path.join(s.dir, "supervisor.json")) as { pid: number }).pid : null;
      if (adopter !== null) {
        expect(seen?.state).toBe("running");
        t.pid(adopter);
        fs.writeFileSync(s.go, "");
      }
      const record = await recordOf(s, name);
      if (adopter !== null) {
        expect(record).toMatchObject({ status: "ok" });
        await waitGone(adopter, 30_000);
      } else {
        // Lost: the supervisor died before its agent was let run. A reader that came within the
        // milliseconds bubblewrap takes to end after its gate closed adopts it at `started`, and records the
        // sandbox's exit and words instead (specs/sandbox.md, "A supervisor's death while the sandbox goes up").
        const words = JSON.stringify(record.error);
        expect(["lost", "failed"], words).toContain(record.status);
        if (record.status === "failed") {
          expect(fs.readFileSync(path.join(s.dir, "stderr.log"), "utf8"), words).toContain("nothing was run");
        }
        expect(fs.existsSync(s.marker), "the agent ran").toBe(false);
        // The sandbox ends by itself once its bridge is up and finds its gate closed: within the bridge's
        // own start limit, whoever recorded the dispatch (specs/sandbox.md).
        await waitFor(
          "the sandbox to end by itself",
          () => (findByDispatchVariable(s.dispatchId).length === 0 ? true : undefined),
          15_000,
        );
      }
      t.pass();
    });
  }

  it("the supervisor SIGKILLed mid-run and the agent ends before any reader: recorded lost, nothing left of the bridge", async () => {
    const t = trial("17c sandboxed, supervisor SIGKILLed watching, agent then exits");
    const name = "sandboxed-ends";
    const s = await sandboxedAt(t, "watching", name);
    await waitForFile(s.marker);
    const proc = await waitForJson<{ pid: number }>(path.join(s.dir, "proc.json"));
    await killSupervisor(s);
    fs.writeFileSync(s.go, "");
    // bubblewrap's monitor ends with the agent; its namespace's last process (a bridge listener) with it.
    await waitGone(proc.pid);
    const record = await recordOf(s, name);
    expect(record).toMatchObject({ status: "lost", error: { code: "E_SUPERVISOR_LOST" } });
    expect(isAlive(proc.pid)).toBe(false);
    t.pass();
  });
});
