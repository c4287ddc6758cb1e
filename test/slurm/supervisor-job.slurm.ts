import { execFile } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, inject, it } from "vitest";
import { submitJob } from "../../src/engines/slurm/sbatch.js";
import { CLI_MAIN, fakeAgentFolder, readJson, reapAll, tempDir } from "../helpers/folders.js";
import { waitForJson } from "../helpers/wait.js";
import { inState, untilJob } from "./poll.js";

// catherd's own supervisor as the batch job, on a hand-made dispatch folder (dispatch.slurm.ts does the
// same through `catherd dispatch --placement slurm`). The folder is the only channel between the job and
// the test.

const provided = inject("slurm");
const cluster = "cluster" in provided ? provided.cluster : null;
const env = { ...process.env, ...cluster?.env };
const dispatches: string[] = [];

afterEach(() => {
  expect(reapAll(dispatches.splice(0)), "processes left running").toBe(0);
});

function supervisorJob(steps: Record<string, unknown>[]) {
  const { dir, id } = fakeAgentFolder({ steps }, {}, tempDir("catherd-slurm-run-"));
  dispatches.push(id);
  return {
    dir,
    request: {
      jobName: `catherd.test.${id}`,
      outputPath: path.join(dir, "slurm.out"),
      workDir: dir,
      memoryBytes: 256 * 1024 * 1024,
      wallMs: 60_000,
      graceMs: 10_000,
      licenses: { "claude-code": 1 },
      extraArgs: [],
      command: [process.execPath, CLI_MAIN, "supervise", dir],
    },
  };
}

const until = (jobId: string, state: string) => untilJob(jobId, state, inState(state), env);

describe.skipIf(cluster === null)("catherd's supervisor as a Slurm job", () => {
  it("supervises its agent to the record, and the job ends COMPLETED", async () => {
    const job = supervisorJob([{ out: "working" }, { exit: 0 }]);
    const { jobId } = await submitJob(job.request, { env });
    const record = await waitForJson(path.join(job.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok" });
    await until(jobId, "COMPLETED");
    expect(readJson(path.join(job.dir, "supervisor.json"))).toMatchObject({ host: { name: cluster?.node } });
  });

  // `scancel --batch --signal=TERM` signals the batch step alone: the supervisor gets SIGTERM and stops
  // its agent. A plain scancel (or the time limit) signals every process of the job, the agent too, which
  // may die before its supervisor acts; a supervisor placed by `dispatch` reads slurmstepd's notice then
  // (dispatch.slurm.ts). This hand-made folder has no placement.json: its supervisor is not placed.
  it("records the dispatch cancelled once when its batch step gets SIGTERM, and exits 0", async () => {
    const job = supervisorJob([{ out: "working" }, { hang: true }]);
    const { jobId } = await submitJob(job.request, { env });
    await waitForJson(path.join(job.dir, "proc.json"), 30_000);
    await promisify(execFile)("scancel", ["--batch", "--signal=TERM", jobId], { env });
    const record = await waitForJson(path.join(job.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "cancelled", error: { code: "E_SUPERVISOR_SIGNALLED" } });
    // The supervisor exited 0 after its record (specs/cli.md), so the engine says the job COMPLETED.
    const ended = await until(jobId, "COMPLETED");
    expect(ended.kind === "known" && ended.job.exit).toEqual({ code: 0, signal: 0 });
  });
});
