import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { UNREACHABLE_LOST_MS } from "../../src/engines/ssh/sight.js";
import { type CliResult, runCli } from "../helpers/cli.js";
import { readJson } from "../helpers/folders.js";
import { reapCgroups, reapDispatch } from "../helpers/processes.js";
import {
  execArgs,
  placedHome,
  placeOn,
  type Row,
  rowOf,
  sshOnPath,
  sshSuiteUnavailable,
} from "../helpers/ssh-placement.js";
import { startSshd } from "../helpers/sshd.js";
import { waitForJson } from "../helpers/wait.js";

// A host that stops answering mid-run (specs/placement.md, "Liveness and cancel"): the rig's sshd is
// stopped while a dispatch runs there, which ends its namespace and everything in it. From here the
// supervisor's lock goes stale and ssh fails: the dispatch is unknown, and nothing is recorded until the
// lock has been silent for UNREACHABLE_LOST_MS (10 min; the bound itself is table-tested in
// test/engines/ssh-sight.test.ts). The CLI's reader has no clock a test can move, and this test does not
// wait 10 min: once the lock is stale for real, its mtime is set back past the bound — the lock as a
// dead supervisor leaves it, 10 min on — and the reader, on its own clock, records the dispatch lost.

const why = sshSuiteUnavailable();

describe.skipIf(why !== null)("a host that stops answering", () => {
  it("leaves its dispatch unknown and unrecorded once the lock is stale and ssh fails, then lost past the bound", {
    timeout: 150_000,
  }, async () => {
    const sshd = await startSshd();
    let id: string | null = null;
    try {
      const { env } = placedHome(sshOnPath(sshd));
      const run = (args: readonly string[]) => runCli(args, { env, timeoutMs: 60_000 });
      const d = await placeOn(sshd, env, execArgs([{ out: "working" }, { hang: true }]));
      id = d.dispatchId;
      await waitForJson(path.join(d.dir, "proc.json"), 60_000);
      // The host goes away, and with its namespace the supervisor and its agent.
      await sshd.stop();
      const lock = path.join(d.dir, "supervisor.lock");
      expect(await untilStale(d.dispatchId, lock, run)).toMatchObject({ state: "unknown", status: null });
      expect(fs.existsSync(path.join(d.dir, "record.json"))).toBe(false);
      const past = new Date(Date.now() - UNREACHABLE_LOST_MS - 60_000);
      fs.utimesSync(lock, past, past);
      expect(await rowOf(d.dispatchId, run)).toMatchObject({ state: "recorded", status: "lost" });
      const record = path.join(d.dir, "record.json");
      const pid = d.placement?.jobId;
      const words = `ssh ${sshd.host}: supervisor ${pid} has not refreshed its lock for 10 min, and ${sshd.host} does not answer: cannot ask ${sshd.host} about its supervisors: ssh ${sshd.host} failed: `;
      expect(readJson(record)).toMatchObject({
        status: "lost",
        error: {
          code: "E_SUPERVISOR_LOST",
          engine: { name: "ssh", jobId: pid, state: "UNREACHABLE", words: expect.stringContaining(words) },
        },
      });
      // Recorded once: the readers after it leave the record as written.
      const written = { text: fs.readFileSync(record, "utf8"), ino: fs.statSync(record).ino };
      expect(await rowOf(d.dispatchId, run)).toMatchObject({ state: "recorded", status: "lost" });
      expect((await run(["wait", d.dispatchId, "--json"])).code).toBe(1);
      expect({ text: fs.readFileSync(record, "utf8"), ino: fs.statSync(record).ino }).toEqual(written);
    } finally {
      await sshd.stop();
      // The namespace took every process of the dispatch with it; the cgroups its supervisor made on this
      // kernel stay, and are removed.
      expect(id === null ? 0 : reapDispatch(id), "processes left running").toBe(0);
      if (id !== null) reapCgroups(id);
    }
  });
});

/** Reads the dispatch's row until its lock is stale for real and it is no longer judged running. */
async function untilStale(
  id: string,
  lock: string,
  run: (args: readonly string[]) => Promise<CliResult>,
): Promise<Row | undefined> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const row = await rowOf(id, run);
    const stale = Date.now() - fs.statSync(lock).mtimeMs > 31_000;
    if (stale && row?.state !== "running") return row;
    if (Date.now() > deadline) throw new Error(`still ${row?.state} past the deadline`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
