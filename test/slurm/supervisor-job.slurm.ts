import * as path from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { cancelJob } from "../../src/infra/slurm/cancel.js";
import { type JobReading, readJob } from "../../src/infra/slurm/job.js";
import { engineNoticeIn } from "../../src/infra/slurm/job-output.js";
import { submitJob } from "../../src/infra/slurm/submit.js";
import { CLI_MAIN, fakeAgentFolder, readJson, reapAll, tempDir } from "../helpers/folders.js";
import { waitForJson } from "../helpers/wait.js";

// catherd's own supervisor as the batch job, on a hand-made dispatch folder: the seam round two wires into
// dispatch (specs/placement.md). The folder is the only channel between the job and the test.

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

async function until(jobId: string, state: string): Promise<JobReading> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const reading = await readJob(jobId, { env });
    if (reading.kind === "known" && reading.job.state === state) return reading;
    if (Date.now() > deadline) throw new Error(`job ${jobId} not ${state}: ${JSON.stringify(reading)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(cluster === null)("catherd's supervisor as a Slurm job", () => {
  it("supervises its agent to the record, and the job ends COMPLETED", async () => {
    const job = supervisorJob([{ out: "working" }, { exit: 0 }]);
    const { jobId } = await submitJob(job.request, { env });
    const record = await waitForJson(path.join(job.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok" });
    await until(jobId, "COMPLETED");
    expect(readJson(path.join(job.dir, "supervisor.json"))).toMatchObject({ host: { name: cluster?.node } });
  });

  it("records the dispatch cancelled once when the job is cancelled: the supervisor gets SIGTERM and stops its agent", async () => {
    const job = supervisorJob([{ out: "working" }, { hang: true }]);
    const { jobId } = await submitJob(job.request, { env });
    await waitForJson(path.join(job.dir, "proc.json"), 30_000);
    await cancelJob(jobId, { env });
    const record = await waitForJson(path.join(job.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "cancelled", error: { code: "E_SUPERVISOR_SIGNALLED" } });
    const ended = await until(jobId, "CANCELLED");
    // The supervisor handled the SIGTERM and exited 0 (specs/cli.md): the job is CANCELLED with exit 0:0.
    expect(ended.kind === "known" && ended.job.exit).toEqual({ code: 0, signal: 0 });
    // The engine's words are in the job's output, beside the record, for round two to carry into it.
    expect(engineNoticeIn(job.request.outputPath)).toMatchObject({ jobId, due: null });
  });
});
