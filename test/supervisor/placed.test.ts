import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readJson, reapAll, startSupervisor, tempDir } from "../helpers/folders.js";

// A supervisor an engine placed (specs/placement.md, "The engine's words"): in its job (SLURM_JOB_ID the
// job placement.json names), an agent that dies on a signal may have been ended by the engine, which
// signals every process of the job: the supervisor reads slurmstepd's notice in the job's output before
// it records. Played here without a cluster: the job is the environment and the files a job would have.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

/** A folder whose agent kills itself with SIGTERM, placed as job 77, with `notice` in its slurm.out. */
function placedFolder(notice: string | null) {
  const id = `t-placed-${Math.random().toString(36).slice(2, 8)}`;
  const dir = path.join(tempDir(), id);
  fs.mkdirSync(dir, { mode: 0o700 });
  fs.writeFileSync(
    path.join(dir, "spec.json"),
    JSON.stringify({ cmd: "/bin/sh", args: ["-c", "kill -TERM $$"], pollMs: 20, killGraceMs: 300 }),
  );
  fs.writeFileSync(
    path.join(dir, "placement.json"),
    JSON.stringify({
      schema: 1,
      engine: "slurm",
      jobId: "77",
      cluster: null,
      submittedAt: new Date().toISOString(),
      node: null,
    }),
  );
  if (notice !== null)
    fs.writeFileSync(path.join(dir, "slurm.out"), `slurmstepd-node7: error: *** ${notice} ***\n`);
  dispatched.push(id);
  return dir;
}

async function supervisePlaced(dir: string, jobId: string) {
  const run = startSupervisor(dir, { ...process.env, SLURM_JOB_ID: jobId, SLURMD_NODENAME: "node7" });
  expect(await run.done).toEqual({ code: 0, signal: null });
  return readJson(path.join(dir, "record.json"));
}

describe("a supervisor in its engine's job", () => {
  it("records the engine's time limit, in its words, when the agent died of the job's SIGTERM", async () => {
    const dir = placedFolder("JOB 77 ON node7 CANCELLED AT 2026-12-01T11:15:06 DUE TO TIME LIMIT");
    const record = await supervisePlaced(dir, "77");
    expect(record).toMatchObject({
      status: "timeout",
      reason: "wall-timeout",
      signal: "SIGTERM",
      error: {
        code: "wall-timeout",
        kind: "timeout",
        message: "slurm: JOB 77 ON node7 CANCELLED AT 2026-12-01T11:15:06 DUE TO TIME LIMIT",
        engine: { name: "slurm", jobId: "77", state: "TIMEOUT" },
      },
    });
    expect(readJson(path.join(dir, "exit.json"))).toMatchObject({ error: { engine: { state: "TIMEOUT" } } });
    // The job has its node now, and placement.json says which.
    expect(readJson(path.join(dir, "placement.json"))).toMatchObject({ jobId: "77", node: "node7" });
  });

  it("records a cancel of the job as cancelled", async () => {
    const record = await supervisePlaced(
      placedFolder("JOB 77 ON node7 CANCELLED AT 2026-12-01T11:15:06"),
      "77",
    );
    expect(record).toMatchObject({
      status: "cancelled",
      reason: "cancelled",
      error: { engine: { state: "CANCELLED" } },
    });
  });

  it("records the agent's own end when the job's output holds no notice of this job", async () => {
    for (const notice of [null, "JOB 12 ON node7 CANCELLED AT 2026-12-01T11:15:06"]) {
      const record = await supervisePlaced(placedFolder(notice), "77");
      expect(record).toMatchObject({ status: "failed", reason: "exited", signal: "SIGTERM" });
      expect((record.error as Record<string, unknown>).engine).toBeUndefined();
    }
  });

  it("is not placed inside a job placement.json does not name (a local supervisor in some allocation)", async () => {
    const dir = placedFolder("JOB 77 ON node7 CANCELLED AT 2026-12-01T11:15:06 DUE TO TIME LIMIT");
    const record = await supervisePlaced(dir, "78");
    expect(record).toMatchObject({ status: "failed", reason: "exited" });
    expect(readJson(path.join(dir, "placement.json"))).toMatchObject({ node: null });
  });
});
