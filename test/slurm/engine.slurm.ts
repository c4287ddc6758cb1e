import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";
import { judgeEnding } from "../../src/domain/ending/ending.js";
import type { EngineEnding } from "../../src/engines/engine.js";
import { type JobReading, readJob, readJobs } from "../../src/engines/slurm/job.js";
import { engineNoticeIn } from "../../src/engines/slurm/job-output.js";
import { clusterLicenses, definesLicense } from "../../src/engines/slurm/licenses.js";
import { submitJob } from "../../src/engines/slurm/sbatch.js";
import { cancelJob } from "../../src/engines/slurm/scancel.js";
import { engineEnding, jobPhase } from "../../src/engines/slurm/states.js";
import type { SubmitRequest } from "../../src/engines/slurm/submit-request.js";
import { tempDir } from "../helpers/folders.js";
import { waitForFile } from "../helpers/wait.js";
import { eventually, inState, untilJob } from "./poll.js";

/** The status a record gets from an engine's ending (src/domain/ending/ending.ts decides it). */
function recordStatus(ending: EngineEnding): string {
  const words = { name: "slurm", jobId: "1", state: ending.state, words: ending.words } as const;
  const seen = { engine: { ...ending, words } };
  return judgeEnding({ reason: "lost", code: null, signal: null, seen }, null).status;
}

// The engine wrapper (src/engines/slurm/) against a real one-node cluster (test/slurm/cluster.setup.ts):
// jobs that wait for a file the test creates, so that each state is reached when the test says, never
// after a sleep.

const provided = inject("slurm");
const cluster = "cluster" in provided ? provided.cluster : null;
const env = { ...process.env, ...cluster?.env };

/** A job that says it started, waits for `<dir>/release`, and exits with `code`. */
function waitingJob(name: string, licenses: Record<string, number> = {}, code = 0) {
  const dir = tempDir("catherd-slurm-job-");
  const request: SubmitRequest = {
    jobName: `catherd.test.${name}`,
    outputPath: path.join(dir, "slurm.out"),
    workDir: dir,
    memoryBytes: 32 * 1024 * 1024,
    wallMs: 5 * 60_000,
    graceMs: 15_000,
    licenses,
    extraArgs: [],
    command: [
      "/bin/sh",
      "-c",
      `echo started; while [ ! -e release ]; do sleep 0.05; done; echo released; exit ${code}`,
    ],
  };
  return {
    dir,
    request,
    release: () => fs.writeFileSync(path.join(dir, "release"), ""),
    // The controller says RUNNING once the job has its node, before slurmstepd has started the script: a
    // signal sent in between is lost (the job then ends by SIGKILL after KillWait).
    started: () => waitForFile(request.outputPath),
  };
}

/** Reads the job until `accept` takes the reading. */
const until = (jobId: string, what: string, accept: (reading: JobReading) => boolean) =>
  untilJob(jobId, what, accept, env);

describe.skipIf(cluster === null)("the Slurm engine wrapper on a real one-node cluster", () => {
  if (cluster === null) return;

  it("reads the licenses the cluster defines", async () => {
    const licenses = await clusterLicenses({ env });
    expect(licenses.codex).toMatchObject({ name: "codex", total: 1 });
    expect(licenses["claude-code"]).toMatchObject({ name: "claude-code", total: 2 });
    expect(await definesLicense("gemini", { env })).toBe(true);
    expect(await definesLicense("opencode", { env })).toBe(false);
  });

  it("submits a job that runs on the node, then ends COMPLETED with its exit code", async () => {
    const job = waitingJob("completes");
    const { jobId } = await submitJob(job.request, { env });
    const running = await until(jobId, "running", inState("RUNNING"));
    expect(running.kind === "known" && running.job).toMatchObject({
      name: "catherd.test.completes",
      node: cluster.node,
      endTime: null,
      licenses: null,
    });
    job.release();
    const ended = await until(jobId, "completed", inState("COMPLETED"));
    expect(ended.kind === "known" && ended.job.exit).toEqual({ code: 0, signal: 0 });
    expect(fs.readFileSync(job.request.outputPath, "utf8")).toBe("started\nreleased\n");
  });

  it("keeps a job pending for Licenses while another holds the only codex license", async () => {
    const first = waitingJob("holds-codex", { codex: 1 });
    const second = waitingJob("waits-codex", { codex: 1 });
    const a = await submitJob(first.request, { env });
    await until(a.jobId, "running", inState("RUNNING"));
    const b = await submitJob(second.request, { env });
    const pending = await until(
      b.jobId,
      "pending for Licenses",
      (r) => r.kind === "known" && r.job.reason === "Licenses",
    );
    expect(pending.kind === "known" && pending.job).toMatchObject({
      state: "PENDING",
      node: null,
      startTime: null,
      licenses: "codex:1",
    });
    expect(pending.kind === "known" && jobPhase(pending.job.state)).toBe("pending");
    // Both at once, as a reader of many dispatches asks: one squeue.
    const both = await readJobs([a.jobId, b.jobId], { env });
    expect(both instanceof Map && [both.get(a.jobId)?.state, both.get(b.jobId)?.reason]).toEqual([
      "RUNNING",
      "Licenses",
    ]);
    first.release();
    await until(b.jobId, "running once the license is free", inState("RUNNING"));
    second.release();
    await until(b.jobId, "completed", inState("COMPLETED"));
  });

  it("records an scancel from outside as CANCELLED, with the engine's notice in the job's output", async () => {
    const job = waitingJob("cancelled-outside");
    const { jobId } = await submitJob(job.request, { env });
    await until(jobId, "running", inState("RUNNING"));
    await job.started();
    await promisify(execFile)("scancel", [jobId], { env });
    const ended = await until(jobId, "cancelled", inState("CANCELLED"));
    if (ended.kind !== "known") throw new Error("unreachable");
    expect(jobPhase(ended.job.state)).toBe("ended");
    expect(recordStatus(engineEnding(ended.job, true))).toBe("cancelled");
    expect(engineEnding(ended.job, true)).toEqual({
      reason: "cancelled",
      kind: "cancelled",
      code: "cancelled",
      state: "CANCELLED",
      words: `slurm job ${jobId} CANCELLED, batch script signal 15`,
    });
    // slurmstepd writes its notice as it kills the job: wait for it rather than assume it is there.
    const notice = await eventually(
      "slurmstepd's notice",
      () => engineNoticeIn(job.request.outputPath) ?? undefined,
    );
    expect(notice).toMatchObject({ jobId, node: cluster.node, due: null });
    expect(notice?.words).toMatch(new RegExp(`^JOB ${jobId} ON ${cluster.node} CANCELLED AT \\S+$`));
  });

  it("cancels a pending job, which never gets a node", async () => {
    const holder = waitingJob("holds-codex-2", { codex: 1 });
    const waiter = waitingJob("cancelled-pending", { codex: 1 });
    const a = await submitJob(holder.request, { env });
    await until(a.jobId, "running", inState("RUNNING"));
    const b = await submitJob(waiter.request, { env });
    await until(b.jobId, "pending", inState("PENDING"));
    await cancelJob(b.jobId, { env });
    const ended = await until(b.jobId, "cancelled", inState("CANCELLED"));
    expect(ended.kind === "known" && ended.job).toMatchObject({ node: null, startTime: null });
    expect(fs.existsSync(waiter.request.outputPath)).toBe(false);
    holder.release();
    await until(a.jobId, "completed", inState("COMPLETED"));
  });

  it("says NODE_FAIL for a job whose node went down, and the node's failure in the job's output", async () => {
    const job = waitingJob("node-fails");
    const { jobId } = await submitJob(job.request, { env });
    await until(jobId, "running", inState("RUNNING"));
    const scontrol = (...args: string[]) => promisify(execFile)("scontrol", args, { env });
    await scontrol("update", `nodename=${cluster.node}`, "state=down", "reason=catherd-test");
    try {
      const ended = await until(jobId, "NODE_FAIL", inState("NODE_FAIL"));
      expect(ended.kind === "known" && ended.job.reason).toBe("NodeDown");
      // The batch script's signal comes later, once the node reports the kill: not asserted.
      if (ended.kind === "known") expect(recordStatus(engineEnding(ended.job, true))).toBe("lost");
      expect(ended.kind === "known" && engineEnding(ended.job, true)).toMatchObject({
        kind: "lost",
        words: expect.stringMatching(new RegExp(`^slurm job ${jobId} NODE_FAIL \\(NodeDown\\)`)),
      });
    } finally {
      await nodeBackInService(scontrol);
    }
  });

  it("refuses a job with sbatch's own words", async () => {
    const job = waitingJob("refused", { "no-such-license": 1 });
    await expect(submitJob(job.request, { env })).rejects.toMatchObject({
      code: "E_ENGINE_REFUSED",
      message: expect.stringContaining("Batch job submission failed: Invalid license specification"),
    });
  });

  it("says a job it never had is forgotten, the cluster keeping no accounting", async () => {
    expect(await readJob("999999", { env })).toEqual({ kind: "forgotten" });
    expect(await readJobs(["999999"], { env })).toEqual(new Map());
  });
});

/** Returns the node to service after a test took it down: it re-registers by itself (ReturnToService=2). */
async function nodeBackInService(scontrol: (...args: string[]) => Promise<{ stdout: string }>) {
  await eventually(`node ${cluster?.node} back in service`, async () => {
    const { stdout } = await scontrol("show", "node", "-o", cluster?.node ?? "");
    if (/State=IDLE(\s|$)/.test(stdout)) return true;
    if (/State=DOWN/.test(stdout)) {
      await scontrol("update", `nodename=${cluster?.node}`, "state=resume").catch(() => {});
    }
    return undefined;
  });
}
