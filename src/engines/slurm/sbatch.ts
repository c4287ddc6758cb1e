import { CatherdError } from "../../domain/errors.js";
import { engineError, runSlurm, type SlurmCallOptions } from "./command.js";
import { parseSubmitted } from "./output.js";
import { batchScript, type SubmitRequest, sbatchArgs } from "./submit-request.js";

// Submits a job: `sbatch --parsable` with the flags of `sbatchArgs`, the batch script on stdin.

/** A job the engine accepted. */
export interface SubmittedJob {
  jobId: string;
  /** The cluster sbatch named (a federation or `--clusters` names one), else null. */
  cluster: string | null;
}

/**
 * Submits the request and returns the job's id. Throws E_ENGINE_MISSING, E_ENGINE_TIMEOUT, or
 * E_ENGINE_REFUSED with sbatch's own words ("Batch job submission failed: Invalid license specification").
 */
export async function submitJob(
  request: SubmitRequest,
  options: Omit<SlurmCallOptions, "input"> = {},
): Promise<SubmittedJob> {
  const result = await runSlurm("sbatch", sbatchArgs(request), {
    ...options,
    input: batchScript(request.command),
  });
  if (!result.ok) throw engineError(result, `submit ${request.jobName} to Slurm`);
  const submitted = parseSubmitted(result.stdout);
  if (submitted === null) {
    throw new CatherdError(
      "E_ENGINE_REFUSED",
      `cannot submit ${request.jobName} to Slurm: sbatch --parsable printed no job id: ${JSON.stringify(result.stdout.trim().slice(0, 200))}`,
      { fix: "check the sbatch on PATH is Slurm's (sbatch --version)" },
    );
  }
  return submitted;
}
