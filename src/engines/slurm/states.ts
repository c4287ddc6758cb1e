import type { EnginePhase } from "../../domain/state/supervisor-judgement.js";
import type { EngineEnding } from "../engine.js";
import type { SlurmJob, StepdNotice } from "./output.js";

// How catherd reads a Slurm job's state (specs/placement.md, "States and reasons"). The engine's states
// are Slurm's job state codes (squeue(1), "JOB STATE CODES"); they fall in three phases, and an ended job
// that left no record behind becomes a record of a kind catherd already has, carrying the engine's words.

/** Waiting for an allocation (REQUEUE_HOLD, REQUEUE_FED, RESV_DEL_HOLD: held after a requeue). */
const PENDING_STATES = new Set(["PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"]);

/** The engine is done with the job: it will not run it again (catherd submits with --no-requeue). */
const ENDED_STATES = new Set([
  "BOOT_FAIL",
  "CANCELLED",
  "COMPLETED",
  "DEADLINE",
  "FAILED",
  "NODE_FAIL",
  "OUT_OF_MEMORY",
  "PREEMPTED",
  "REVOKED",
  "SPECIAL_EXIT",
  "TIMEOUT",
]);

/**
 * The phase of a Slurm job state. Every state neither pending nor ended is `running`: the job holds an
 * allocation and its processes may be alive (a COMPLETING job's may still be ending, a SUSPENDED or
 * STOPPED one's are alive and frozen). A state a newer Slurm adds counts as running too: it is never
 * taken for the end of a job whose supervisor may be alive.
 */
export function jobPhase(state: string): EnginePhase {
  if (PENDING_STATES.has(state)) return "pending";
  if (ENDED_STATES.has(state)) return "ended";
  return "running";
}

/** The words a pending job shows where a local one shows its queue position: Slurm's reason, as it is. */
export function pendingWords(job: Pick<SlurmJob, "reason">): string {
  return job.reason ?? "waiting for the scheduler";
}

/**
 * What the engine said at the end, in its words: the state, who cancelled it where the engine says
 * (`CANCELLED by 0`), its reason when there is one (`TIMEOUT (TimeLimit)`), the exit of the batch script.
 */
export function endingWords(job: SlurmJob): string {
  const state = job.cancelledBy === null ? job.state : `${job.state} by ${job.cancelledBy}`;
  const reason = job.reason === null ? "" : ` (${job.reason})`;
  const exit =
    job.exit === null || (job.exit.code === 0 && job.exit.signal === 0)
      ? ""
      : job.exit.signal !== 0
        ? `, batch script signal ${job.exit.signal}`
        : `, batch script exit ${job.exit.code}`;
  return `slurm job ${job.jobId} ${state}${reason}${exit}`;
}

/**
 * The record of a dispatch whose job ended without catherd's record (its supervisor died with the job):
 * the exit reason and kind, as for a local dispatch that ended the same way (the record's status follows
 * from them: src/domain/ending/ending.ts). `started`: the folder shows its supervisor came up (supervisor.json).
 *
 * - CANCELLED: someone cancelled the job (scancel, from catherd or outside): `cancelled`.
 * - TIMEOUT, DEADLINE: the engine's time limit, `--wall` plus the stop's grace: `timeout`.
 * - OUT_OF_MEMORY: `oom`.
 * - NODE_FAIL, PREEMPTED, BOOT_FAIL, and any other end: the supervisor is gone without a word: `lost`
 *   (an orchestrator retries a lost dispatch; catherd asks for --no-requeue, so the engine never reruns
 *   a supervisor whose agent may have started).
 */
export function engineEnding(job: SlurmJob, started: boolean): EngineEnding {
  return endingOf(job.state, endingWords(job), started);
}

/**
 * The ending slurmstepd's notice in the job's output tells, for a job the engine no longer knows (or, for
 * the supervisor itself, one that is still completing): a plain cancel, `DUE TO TIME LIMIT`, `DUE TO
 * PREEMPTION`, `DUE TO NODE FAILURE`, … — each the state the engine gives such a job.
 */
export function noticeEnding(notice: StepdNotice, started: boolean): EngineEnding {
  return endingOf(stateOfNotice(notice.due), `slurm: ${notice.words}`, started);
}

/** A job the engine no longer knows and whose output holds no notice: lost, in words saying so. */
export function forgottenEnding(jobId: string, started: boolean): EngineEnding {
  const words = `slurm job ${jobId} is no longer known to the engine (ended, and no accounting keeps it)`;
  return endingOf("UNKNOWN", words, started);
}

/** The state Slurm gives a job its stepd notice ends: `DUE TO TIME LIMIT` → TIMEOUT, none → CANCELLED. */
function stateOfNotice(due: string | null): string {
  if (due === null) return "CANCELLED";
  if (due.startsWith("TIME LIMIT")) return "TIMEOUT";
  if (due.startsWith("PREEMPTION")) return "PREEMPTED";
  if (due.startsWith("NODE FAIL")) return "NODE_FAIL";
  if (due.startsWith("DEADLINE")) return "DEADLINE";
  return due.replaceAll(" ", "_");
}

function endingOf(state: string, words: string, started: boolean): EngineEnding {
  switch (state) {
    case "CANCELLED":
      return { reason: "cancelled", kind: "cancelled", code: "cancelled", state, words };
    case "TIMEOUT":
    case "DEADLINE":
      return {
        reason: "wall-timeout",
        kind: "timeout",
        code: "wall-timeout",
        state,
        words,
      };
    case "OUT_OF_MEMORY":
      return { reason: "lost", kind: "oom", code: "E_AGENT_OOM", state, words };
    default:
      return {
        reason: "lost",
        kind: "lost",
        code: "E_SUPERVISOR_LOST",
        state,
        words: started ? words : `${words}; its supervisor never started`,
      };
  }
}
