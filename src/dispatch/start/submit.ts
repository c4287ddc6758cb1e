import { CatherdError, isCatherdError } from "../../domain/errors.js";
import type { AdmitPlacement } from "../../domain/schemas.js";
import { jobPhase, pendingWords } from "../../domain/slurm-states.js";
import type { SubmitRequest } from "../../domain/slurm-submit.js";
import { FILES, fileIn, placeOf } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { writeFolderJson } from "../../folder/write.js";
import type { Clock } from "../../infra/clock.js";
import { readJob } from "../../infra/slurm/job.js";
import { clusterLicenses } from "../../infra/slurm/licenses.js";
import { submitJob } from "../../infra/slurm/submit.js";
import { recordSubmitFailure } from "../settle/settle.js";

// Placing a dispatch's supervisor on Slurm (specs/placement.md, "The sbatch call"): the job runs the very
// supervisor program a local launch starts, in the dispatch folder, with the submitter's environment; once
// the engine has accepted it, placement.json names the job. Loaded only for a dispatch placed so: a local
// dispatch never loads the engine's code.

/** Time for the supervisor's stop and record after its wall, on top of its kill grace: Slurm's limit comes after. */
export const RECORD_GRACE_MS = 60_000;

/** A supervisor the engine took, as it stood right after the submission. */
export interface SubmittedSupervisor {
  engine: AdmitPlacement["engine"];
  jobId: string;
  cluster: string | null;
  /** `queued`: the job waits in the engine's queue; `running`: it has its node. */
  state: "queued" | "running";
  /** Slurm's reason for a queued job (`Licenses`, `Resources`, `Priority`, …), else null. */
  reason: string | null;
  node: string | null;
}

/**
 * Submits the supervisor of `dir` as a Slurm job running `command` (the supervisor program on the folder)
 * and writes placement.json. A submission the engine refuses (or that cannot be made: no sbatch, no
 * answer) records the dispatch `spawn-failed` with the engine's words and throws that error: the folder
 * never looks placed when it is not.
 */
export async function submitSupervisor(
  dir: string,
  placement: AdmitPlacement,
  command: readonly string[],
  clock: Clock,
): Promise<SubmittedSupervisor> {
  let submitted: { jobId: string; cluster: string | null };
  try {
    submitted = await submitJob(await submitRequest(dir, placement, command));
  } catch (error) {
    if (!isCatherdError(error)) throw error;
    await recordSubmitFailure(dir, error, clock);
    const what = `dispatch ${placeOf(dir)?.dispatchId ?? dir} recorded as spawn-failed`;
    throw new CatherdError(error.code, `${error.message} (${what})`, {
      ...(error.fix === undefined ? {} : { fix: error.fix }),
      cause: error,
    });
  }
  writeFolderJson(dir, FILES.placement, {
    engine: placement.engine,
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
    engine: placement.engine,
    ...submitted,
    state: running ? "running" : "queued",
    reason: job === null || running ? null : pendingWords(job),
    node: running ? job.node : null,
  };
}

/**
 * The sbatch request of a dispatch: its name says run and dispatch, its output goes into the folder,
 * `--mem` and `--time` from its spec (the wall plus the stop's grace), a license of its backend's name
 * where the cluster defines one, `--pass-env` names exported by name, `--slurm-opt` as given.
 */
async function submitRequest(
  dir: string,
  placement: AdmitPlacement,
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
    outputPath: fileIn(dir, FILES.slurmOut),
    workDir: dir,
    memoryBytes: spec.value.memoryBytes ?? null,
    wallMs: spec.value.wallMs ?? null,
    graceMs: (spec.value.killGraceMs ?? 0) + RECORD_GRACE_MS,
    licenses: Object.hasOwn(licenses, backend) ? { [backend]: 1 } : {},
    extraArgs: placement.options,
    exportNames: spec.value.passEnv ?? [],
    command,
  };
}
