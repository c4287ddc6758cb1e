import * as os from "node:os";
import { CatherdError } from "../../domain/errors.js";
import type { AdmitPlacement } from "../../domain/schemas.js";
import { FILES, fileIn, placeOf } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { writeFolderJson } from "../../folder/write.js";
import { waitUntil } from "../../infra/wait-until.js";
import { resolveExecutable } from "../../infra/which.js";
import type { Engine, EngineEnding, EngineSight, Submitted } from "../engine.js";
import { NOT_PLACED_FIX } from "./command.js";
import { readJob, readJobs } from "./job.js";
import { engineNoticeIn, jobOutputIn } from "./job-output.js";
import { clusterLicenses } from "./licenses.js";
import type { SlurmJob, StepdNotice } from "./output.js";
import { submitJob } from "./sbatch.js";
import { cancelJob } from "./scancel.js";
import { engineEnding, forgottenEnding, jobPhase, noticeEnding, pendingWords } from "./states.js";
import type { SubmitRequest } from "./submit-request.js";
import { slurmUnusable } from "./usable.js";

// Slurm as a placement engine (specs/placement.md, "Slurm"): the supervisor is a batch job running the
// very supervisor program a local launch starts, in the dispatch folder, with the submitter's environment.
// What the engine knows of it is squeue's answer for all the jobs of one reading (scontrol and sacct for
// one that ended), and, for a job it has forgotten, slurmstepd's notice in the job's output.

/** Time for the supervisor's stop and record after its wall, on top of its kill grace: Slurm's limit comes after. */
export const RECORD_GRACE_MS = 60_000;

/** How long the supervisor looks for slurmstepd's notice: it is written before the job's signals are sent. */
const NOTICE_WAIT_MS = 1000;
const NOTICE_POLL_MS = 50;

export const slurmEngine: Engine = {
  name: "slurm",

  // Slurm's nodes are the cluster's: whether they share the folder is the site's promise (specs/placement.md).
  async unusable(_where) {
    if (resolveExecutable("sbatch", process.env.PATH ?? "") === null) {
      return new CatherdError(
        "E_ENGINE_MISSING",
        "cannot place the dispatch on Slurm: sbatch is not installed here (not found on PATH)",
        {
          fix: `install Slurm's client commands on this host (Debian: apt-get install slurm-client), ${NOT_PLACED_FIX}`,
        },
      );
    }
    return slurmUnusable();
  },

  async submit(dir, asked, command, clock) {
    const submitted = await submitJob(await submitRequest(dir, asked, command));
    writeFolderJson(dir, FILES.placement, {
      engine: "slurm",
      jobId: submitted.jobId,
      cluster: submitted.cluster,
      submittedAt: clock.wallNow().toISOString(),
      node: null,
    });
    // Where it stands now: an answer that does not come says queued, which a job just submitted is.
    const reading = await readJob(submitted.jobId);
    const job = reading.kind === "known" ? reading.job : null;
    const running = job !== null && jobPhase(job.state) !== "pending";
    return {
      engine: "slurm",
      ...submitted,
      state: running ? "running" : "queued",
      reason: job === null || running ? null : pendingWords(job),
      node: running ? job.node : null,
    } satisfies Submitted;
  },

  async sights(placed) {
    const sights = new Map<string, EngineSight>();
    if (placed.size === 0) return sights;
    const known = await readJobs([...new Set([...placed.values()].map((p) => p.jobId))]);
    for (const [dir, placement] of placed) {
      if (!(known instanceof Map)) {
        sights.set(dir, { kind: "unreachable", error: known.unreachable });
        continue;
      }
      const listed = known.get(placement.jobId);
      // squeue does not say how a job ended (its exit, who cancelled it): an ended one is read in full.
      if (listed !== undefined && jobPhase(listed.state) !== "ended") {
        sights.set(dir, jobSight(listed));
        continue;
      }
      const reading = await readJob(placement.jobId);
      sights.set(
        dir,
        reading.kind === "known"
          ? jobSight(reading.job)
          : reading.kind === "forgotten"
            ? forgottenSight(placement.jobId, engineNoticeIn(jobOutputIn(dir)))
            : { kind: "unreachable", error: reading.error },
      );
    }
    return sights;
  },

  cancel(placement) {
    return cancelJob(placement.jobId);
  },

  isThisProcess(placement) {
    const jobId = process.env.SLURM_JOB_ID;
    return jobId !== undefined && jobId !== "" && placement.jobId === jobId;
  },

  nodeOfThisProcess() {
    return process.env.SLURMD_NODENAME || os.hostname();
  },

  /**
   * slurmstepd's notice in the job's output (`CANCELLED AT …`, `… DUE TO TIME LIMIT`): the engine signals
   * every process of the job, the agent too, which may die before the supervisor acts; while the job ends
   * the controller says only COMPLETING, so the notice is the engine's word on why.
   */
  async endingOfThisProcess(dir, placement, clock) {
    const notice = await waitUntil(
      () => {
        const found = engineNoticeIn(jobOutputIn(dir));
        return found !== null && found.jobId === placement.jobId ? found : undefined;
      },
      { clock, deadline: clock.now() + NOTICE_WAIT_MS, pollMs: NOTICE_POLL_MS },
    );
    return notice === undefined ? null : noticeEnding(notice, true);
  },
};

/**
 * A job the engine knows. A job pending again after its supervisor came up was requeued by hand (catherd
 * submits --no-requeue): that supervisor is gone too.
 */
export function jobSight(job: SlurmJob): EngineSight {
  const phase = jobPhase(job.state);
  const ended = phase === "ended";
  return {
    kind: "known",
    phase,
    words: `slurm job ${job.jobId} ${job.state}${job.reason === null ? "" : ` (${job.reason})`}`,
    reason: phase === "pending" ? pendingWords(job) : null,
    node: phase === "running" ? job.node : null,
    ending: {
      started: ended || phase === "pending" ? engineEnding(job, true) : null,
      unstarted: ended ? engineEnding(job, false) : null,
    },
  };
}

/** A job the engine no longer knows (purged, no accounting): ended, in slurmstepd's words if it left any. */
export function forgottenSight(jobId: string, notice: StepdNotice | null): EngineSight {
  const ending = (started: boolean): EngineEnding =>
    notice === null ? forgottenEnding(jobId, started) : noticeEnding(notice, started);
  return {
    kind: "known",
    phase: "ended",
    words: notice === null ? `slurm job ${jobId} is forgotten` : `slurm: ${notice.words}`,
    reason: null,
    node: null,
    ending: { started: ending(true), unstarted: ending(false) },
  };
}

/**
 * The sbatch request of a dispatch: its name says run and dispatch, its output goes into the folder,
 * `--mem` and `--time` from its spec (the wall plus the stop's grace), a license of its backend's name
 * where the cluster defines one, `--pass-env` names exported by name, `--slurm-opt` as given.
 */
async function submitRequest(
  dir: string,
  asked: AdmitPlacement,
  command: readonly string[],
): Promise<SubmitRequest> {
  const spec = readFolderJson(dir, FILES.spec);
  if (spec.kind !== "ok") {
    throw spec.kind === "missing"
      ? new CatherdError("E_SPEC_INVALID", `${fileIn(dir, FILES.spec)} is missing`)
      : spec.error;
  }
  const place = placeOf(dir);
  const backend = spec.value.backend;
  const licenses = await clusterLicenses();
  return {
    jobName: `catherd.${place?.run ?? "none"}.${place?.dispatchId ?? spec.value.dispatchId ?? "dispatch"}`,
    outputPath: jobOutputIn(dir),
    workDir: dir,
    memoryBytes: spec.value.memoryBytes ?? null,
    wallMs: spec.value.wallMs ?? null,
    graceMs: (spec.value.killGraceMs ?? 0) + RECORD_GRACE_MS,
    licenses: Object.hasOwn(licenses, backend) ? { [backend]: 1 } : {},
    extraArgs: asked.options,
    exportNames: spec.value.passEnv ?? [],
    command,
  };
}
