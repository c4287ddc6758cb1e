import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  engineWords,
  parseExitCode,
  parseKeyValues,
  parseLicenses,
  parseSacct,
  parseScontrolJob,
  parseSqueue,
  parseStepdNotice,
  parseSubmitted,
  saysAccountingDisabled,
  saysUnknownJob,
} from "../../src/engines/slurm/output.js";
import { ROOT } from "../helpers/folders.js";

const capture = (name: string) => fs.readFileSync(path.join(ROOT, "test/fixtures/slurm", name), "utf8");

describe("sbatch --parsable", () => {
  it.each([
    ["42\n", { jobId: "42", cluster: null }],
    ["42;gpu-cluster\n", { jobId: "42", cluster: "gpu-cluster" }],
    ["sbatch: warning: something\n43\n", { jobId: "43", cluster: null }],
    ["Submitted batch job 42\n", null],
    ["", null],
  ])("reads %j", (stdout, expected) => {
    expect(parseSubmitted(stdout)).toEqual(expected);
  });
});

describe("scontrol's Key=Value lines", () => {
  it("keeps values that hold = and keys that hold : and /", () => {
    expect(
      parseKeyValues("JobId=8 TRES=cpu=1,mem=64M,node=1 AllocNode:Sid=localhost:18612 CPUs/Task=1 Power="),
    ).toEqual({
      JobId: "8",
      TRES: "cpu=1,mem=64M,node=1",
      "AllocNode:Sid": "localhost:18612",
      "CPUs/Task": "1",
      Power: "",
    });
  });

  it("joins a value that holds spaces", () => {
    expect(parseKeyValues("JobId=9 JobName=my long job UserId=root(0)")).toMatchObject({
      JobName: "my long job",
      UserId: "root(0)",
    });
  });

  it.each([
    ["0:0", { code: 0, signal: 0 }],
    ["0:15", { code: 0, signal: 15 }],
    ["127:0", { code: 127, signal: 0 }],
    ["", null],
    [undefined, null],
  ])("reads the exit code %j", (text, expected) => {
    expect(parseExitCode(text)).toEqual(expected);
  });
});

describe("scontrol show job -o, as Slurm 22.05 printed it", () => {
  it.each([
    [
      "scontrol-running.txt",
      {
        jobId: "8",
        name: "hold-codex",
        state: "RUNNING",
        reason: null,
        node: "vm",
        exit: { code: 0, signal: 0 },
      },
      { startTime: "2026-12-01T11:16:30", endTime: null, licenses: "codex:1" },
    ],
    [
      "scontrol-pending-licenses.txt",
      { jobId: "9", state: "PENDING", reason: "Licenses", node: null },
      { startTime: null, endTime: null, licenses: "codex:1" },
    ],
    [
      "scontrol-completed.txt",
      { jobId: "2", state: "COMPLETED", reason: null, node: "vm", exit: { code: 0, signal: 0 } },
      { endTime: "2026-12-01T11:12:55" },
    ],
    [
      "scontrol-cancelled-running.txt",
      { jobId: "1", state: "CANCELLED", node: "vm", exit: { code: 0, signal: 15 } },
      { startTime: "2026-12-01T11:12:13", endTime: "2026-12-01T11:12:25" },
    ],
    [
      "scontrol-cancelled-pending.txt",
      { state: "CANCELLED", reason: "Licenses", node: null },
      // The controller sets StartTime to the cancel for a job that never ran: not a start.
      { startTime: null },
    ],
    [
      "scontrol-timeout.txt",
      { state: "TIMEOUT", reason: "TimeLimit", node: "vm" },
      { exit: { code: 0, signal: 15 } },
    ],
    ["scontrol-node-fail.txt", { state: "NODE_FAIL", reason: "NodeDown", node: "vm" }, {}],
    ["scontrol-failed-bad-constraints.txt", { state: "FAILED", reason: "BadConstraints", node: null }, {}],
  ])("reads %s", (file, job, more) => {
    expect(parseScontrolJob(capture(file).split("\n")[0] as string)).toMatchObject({
      ...job,
      ...more,
      cancelledBy: null,
    });
  });

  it("reads the output path the job writes to", () => {
    expect(parseScontrolJob(capture("scontrol-running.txt"))?.stdout).toBe("/shared/runs/r1/8.out");
  });

  it("names no job in a line without JobId or JobState", () => {
    expect(parseScontrolJob("")).toBeNull();
    expect(parseScontrolJob("JobId=3")).toBeNull();
  });
});

describe("squeue -o '%i|%j|%T|%r|%B|%S|%e'", () => {
  it("reads the jobs of every state, a node only once allocated", () => {
    expect(parseSqueue(capture("squeue-four-states.txt"))).toEqual([
      expect.objectContaining({
        jobId: "4",
        name: "catherd.r1.d-cancel",
        state: "CANCELLED",
        reason: "Resources",
        node: null,
        startTime: null,
      }),
      expect.objectContaining({
        jobId: "1",
        state: "COMPLETED",
        reason: null,
        node: "vm",
        endTime: "2026-12-01T11:30:11",
      }),
      expect.objectContaining({
        jobId: "3",
        state: "PENDING",
        reason: "Licenses",
        node: null,
        startTime: null,
        endTime: null,
      }),
      expect.objectContaining({
        jobId: "2",
        state: "RUNNING",
        node: "vm",
        startTime: "2026-12-01T11:30:11",
        endTime: null,
      }),
    ]);
  });

  it("skips lines that are not a job", () => {
    expect(parseSqueue("\nJOBID|NAME\n5|x|RUNNING|None|vm|2026-12-01T11:30:11\n")).toEqual([]);
  });
});

describe("sacct -n -P -X (the format of sacct(1); no accounting to capture it from)", () => {
  it("reads who cancelled a job", () => {
    expect(
      parseSacct(
        "17|catherd.r1.d1|CANCELLED by 1000|None|node7|0:15|2026-12-01T10:00:00|2026-12-01T10:00:05|2026-12-01T10:09:00\n",
      ),
    ).toMatchObject({
      jobId: "17",
      state: "CANCELLED",
      cancelledBy: "1000",
      node: "node7",
      exit: { code: 0, signal: 15 },
    });
  });

  it("reads a job that never had a node", () => {
    expect(
      parseSacct(
        "18|x|CANCELLED by 0|None|None assigned|0:0|2026-12-01T10:00:00|2026-12-01T10:01:00|2026-12-01T10:01:00\n",
      ),
    ).toMatchObject({ state: "CANCELLED", node: null, startTime: null });
  });

  it("reads NODE_FAIL, and nothing from an empty answer", () => {
    expect(parseSacct("19|x|NODE_FAIL|None|node7|0:0|a|b|c\n")).toMatchObject({
      state: "NODE_FAIL",
      cancelledBy: null,
    });
    expect(parseSacct("")).toBeNull();
  });
});

describe("scontrol show licenses -o", () => {
  it("reads each license with its count", () => {
    expect(parseLicenses(capture("scontrol-show-licenses.txt"))).toEqual({
      "claude-code": { name: "claude-code", total: 2, used: 0, free: 2 },
      codex: { name: "codex", total: 1, used: 1, free: 0 },
      gemini: { name: "gemini", total: 3, used: 0, free: 3 },
    });
  });
});

describe("slurmstepd's notice in a job's output", () => {
  it.each([
    [
      "job-output-cancelled.out",
      { jobId: "1", node: "vm", due: null, words: "JOB 1 ON vm CANCELLED AT 2026-12-01T11:12:25" },
    ],
    [
      "job-output-timeout.out",
      {
        jobId: "4",
        due: "TIME LIMIT",
        words: "JOB 4 ON vm CANCELLED AT 2026-12-01T11:15:06 DUE TO TIME LIMIT",
      },
    ],
    ["job-output-node-fail.out", { jobId: "6", due: "NODE FAILURE", at: "2026-12-01T11:16:02" }],
  ])("reads %s", (file, notice) => {
    expect(parseStepdNotice(`the agent's own lines\n${capture(file)}`)).toMatchObject(notice);
  });

  it("takes the last notice, and none from output without one", () => {
    const two = `${capture("job-output-cancelled.out")}${capture("job-output-timeout.out")}`;
    expect(parseStepdNotice(two)?.jobId).toBe("4");
    expect(parseStepdNotice("*** not a notice ***\n")).toBeNull();
  });
});

describe("the engine's words from a refusal", () => {
  it.each([
    ["sbatch-invalid-license.stderr", "Batch job submission failed: Invalid license specification"],
    ["sbatch-invalid-time.stderr", "Invalid --time specification"],
    [
      "sbatch-invalid-partition.stderr",
      "Batch job submission failed: Invalid partition name specified; invalid partition specified: nope",
    ],
    [
      "sbatch-memory-unsatisfiable.stderr",
      "Batch job submission failed: Requested node configuration is not available; Memory specification can not be satisfied",
    ],
    ["scontrol-unknown-job.stderr", "slurm_load_jobs error: Invalid job id specified"],
  ])("from %s", (file, words) => {
    expect(engineWords(capture(file))).toBe(words);
  });

  it("tells an unknown job and a cluster without accounting", () => {
    expect(saysUnknownJob(capture("scontrol-unknown-job.stderr"))).toBe(true);
    expect(saysUnknownJob(capture("sbatch-invalid-license.stderr"))).toBe(false);
    expect(saysAccountingDisabled(capture("sacct-accounting-disabled.stderr"))).toBe(true);
    expect(saysAccountingDisabled("")).toBe(false);
  });
});
