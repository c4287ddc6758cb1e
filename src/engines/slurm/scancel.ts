import { engineError, runSlurm, type SlurmCallOptions } from "./command.js";

// Cancels a job: `scancel <id>`. Slurm sends the batch script SIGTERM, then SIGKILL after KillWait; a
// pending job simply leaves the queue. Cancelling a job that has already ended is not an error (scancel
// itself says nothing and exits 0 for one the controller still knows or has forgotten).

/** Cancels the job; throws E_ENGINE_MISSING, E_ENGINE_TIMEOUT or E_ENGINE_REFUSED with scancel's words. */
export async function cancelJob(jobId: string, options: SlurmCallOptions = {}): Promise<void> {
  if (!/^\d+$/.test(jobId)) throw new TypeError(`not a Slurm job id: ${JSON.stringify(jobId)}`);
  const result = await runSlurm("scancel", [jobId], options);
  if (!result.ok) throw engineError(result, `cancel Slurm job ${jobId}`);
}
