import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { judgeEnding } from "../../src/domain/ending/ending.js";
import type { EngineEnding } from "../../src/engines/engine.js";
import { parseScontrolJob, type SlurmJob } from "../../src/engines/slurm/output.js";
import {
  endingWords,
  engineEnding,
  forgottenEnding,
  jobPhase,
  noticeEnding,
  pendingWords,
} from "../../src/engines/slurm/states.js";
import { ROOT } from "../helpers/folders.js";

/** The engine's ending with the status its record gets (src/domain/ending/ending.ts decides it). */
function recorded(ending: EngineEnding) {
  const words = { name: "slurm", jobId: "1", state: ending.state, words: ending.words } as const;
  const seen = { engine: { ...ending, words } };
  return { ...ending, status: judgeEnding({ reason: "lost", code: null, signal: null, seen }, null).status };
}

const captured = (name: string) =>
  parseScontrolJob(fs.readFileSync(path.join(ROOT, "test/fixtures/slurm", name), "utf8")) as SlurmJob;

describe("the phase of a Slurm job state", () => {
  it.each([
    ["PENDING", "pending"],
    ["REQUEUED", "pending"],
    ["REQUEUE_HOLD", "pending"],
    ["RUNNING", "running"],
    ["CONFIGURING", "running"],
    ["COMPLETING", "running"],
    ["SUSPENDED", "running"],
    ["STOPPED", "running"],
    ["SIGNALING", "running"],
    ["A_STATE_OF_A_NEWER_SLURM", "running"],
    ["COMPLETED", "ended"],
    ["CANCELLED", "ended"],
    ["FAILED", "ended"],
    ["TIMEOUT", "ended"],
    ["NODE_FAIL", "ended"],
    ["PREEMPTED", "ended"],
    ["BOOT_FAIL", "ended"],
    ["DEADLINE", "ended"],
    ["OUT_OF_MEMORY", "ended"],
  ])("%s is %s", (state, phase) => {
    expect(jobPhase(state)).toBe(phase);
  });
});

describe("what a pending job shows", () => {
  it("shows Slurm's reason as it is, and says the scheduler has not looked yet without one", () => {
    expect(pendingWords(captured("scontrol-pending-licenses.txt"))).toBe("Licenses");
    expect(pendingWords({ reason: null })).toBe("waiting for the scheduler");
  });
});

describe("the record of a job the engine ended", () => {
  it.each([
    [
      "scontrol-cancelled-running.txt",
      {
        reason: "cancelled",
        status: "cancelled",
        kind: "cancelled",
        code: "cancelled",
        state: "CANCELLED",
        words: "slurm job 1 CANCELLED, batch script signal 15",
      },
    ],
    [
      "scontrol-timeout.txt",
      {
        reason: "wall-timeout",
        status: "timeout",
        kind: "timeout",
        code: "wall-timeout",
        state: "TIMEOUT",
        words: "slurm job 4 TIMEOUT (TimeLimit), batch script signal 15",
      },
    ],
    [
      "scontrol-node-fail.txt",
      {
        reason: "lost",
        status: "lost",
        kind: "lost",
        code: "E_SUPERVISOR_LOST",
        state: "NODE_FAIL",
        words: "slurm job 6 NODE_FAIL (NodeDown), batch script signal 15",
      },
    ],
    [
      "scontrol-completed.txt",
      // Completed without a record: the supervisor exited 0 and wrote nothing (a reader records it lost).
      {
        reason: "lost",
        status: "lost",
        kind: "lost",
        code: "E_SUPERVISOR_LOST",
        state: "COMPLETED",
        words: "slurm job 2 COMPLETED",
      },
    ],
  ])("from %s", (file, ending) => {
    expect(recorded(engineEnding(captured(file), true))).toEqual(ending);
  });

  it("says who cancelled, where the engine says", () => {
    const job = { ...captured("scontrol-cancelled-running.txt"), cancelledBy: "1000" };
    expect(endingWords(job)).toBe("slurm job 1 CANCELLED by 1000, batch script signal 15");
  });

  it.each([
    ["PREEMPTED", { status: "lost", kind: "lost" }],
    ["BOOT_FAIL", { status: "lost", kind: "lost" }],
    ["DEADLINE", { status: "timeout", kind: "timeout" }],
    ["OUT_OF_MEMORY", { status: "failed", kind: "oom", code: "E_AGENT_OOM" }],
    ["FAILED", { status: "lost", kind: "lost" }],
  ])("maps %s", (state, ending) => {
    expect(recorded(engineEnding({ ...captured("scontrol-completed.txt"), state }, true))).toMatchObject(
      ending,
    );
  });

  it("says the supervisor never started when the folder shows none", () => {
    const failed = { ...captured("scontrol-completed.txt"), state: "FAILED", exit: { code: 127, signal: 0 } };
    expect(engineEnding(failed, false).words).toBe(
      "slurm job 2 FAILED, batch script exit 127; its supervisor never started",
    );
  });
});

describe("the ending slurmstepd's notice tells", () => {
  const notice = (due: string | null) => ({
    jobId: "4",
    node: "vm",
    at: "2026-12-01T11:15:06",
    due,
    words: `JOB 4 ON vm CANCELLED AT 2026-12-01T11:15:06${due === null ? "" : ` DUE TO ${due}`}`,
  });

  it.each([
    [null, { reason: "cancelled", status: "cancelled", kind: "cancelled", state: "CANCELLED" }],
    ["TIME LIMIT", { reason: "wall-timeout", status: "timeout", kind: "timeout", state: "TIMEOUT" }],
    ["PREEMPTION", { reason: "lost", status: "lost", kind: "lost", state: "PREEMPTED" }],
    ["NODE FAILURE", { reason: "lost", status: "lost", kind: "lost", state: "NODE_FAIL" }],
    ["SOMETHING NEW", { reason: "lost", status: "lost", kind: "lost", state: "SOMETHING_NEW" }],
  ])("a notice due to %s", (due, ending) => {
    expect(recorded(noticeEnding(notice(due), true))).toMatchObject(ending);
  });

  it("quotes the notice as written", () => {
    expect(noticeEnding(notice("TIME LIMIT"), true).words).toBe(
      "slurm: JOB 4 ON vm CANCELLED AT 2026-12-01T11:15:06 DUE TO TIME LIMIT",
    );
  });

  it("records a job the engine forgot, without a notice, lost in words that say so", () => {
    expect(recorded(forgottenEnding("9", false))).toMatchObject({
      reason: "lost",
      status: "lost",
      code: "E_SUPERVISOR_LOST",
      words: expect.stringMatching(/^slurm job 9 is no longer known .*; its supervisor never started$/),
    });
  });
});
