import type { CatherdError } from "../../domain/errors.js";
import { engineError, runSlurm, type SlurmCallOptions } from "./command.js";
import {
  parseSacct,
  parseScontrolJob,
  parseSqueue,
  SACCT_FIELDS,
  type SlurmJob,
  SQUEUE_FORMAT,
  saysAccountingDisabled,
  saysUnknownJob,
} from "./output.js";

// What the engine says of a job. The controller knows a job while it is pending or running and for
// MinJobAge after its end (300 s by default): `scontrol show job -o`. After that only accounting does,
// where the cluster keeps it: `sacct`. Without accounting the job is forgotten, and what the engine said
// at the end survives only in the job's output file (job-output.ts).

/** One reading of a job, never a throw: known (and from where), forgotten, or the engine unreachable. */
export type JobReading =
  | { kind: "known"; job: SlurmJob; source: "scontrol" | "squeue" | "sacct" }
  | { kind: "forgotten" }
  | { kind: "unreachable"; error: CatherdError };

/** Reads one job: the controller first, accounting for a job it no longer knows or to say who cancelled. */
export async function readJob(jobId: string, options: SlurmCallOptions = {}): Promise<JobReading> {
  if (!/^\d+$/.test(jobId)) throw new TypeError(`not a Slurm job id: ${JSON.stringify(jobId)}`);
  const shown = await runSlurm("scontrol", ["show", "job", "-o", jobId], options);
  if (!shown.ok) {
    if (shown.failure !== "refused" || !saysUnknownJob(shown.stderr)) {
      return { kind: "unreachable", error: engineError(shown, `read Slurm job ${jobId}`) };
    }
    return accounted(jobId, options);
  }
  const job = parseScontrolJob(shown.stdout.split("\n")[0] ?? "");
  if (job === null) return { kind: "forgotten" };
  // The controller does not say who cancelled a job; accounting does, where the cluster keeps it.
  if (job.state === "CANCELLED") {
    const more = await accounted(jobId, options);
    if (more.kind === "known" && more.job.cancelledBy !== null) {
      return { kind: "known", job: { ...job, cancelledBy: more.job.cancelledBy }, source: "scontrol" };
    }
  }
  return { kind: "known", job, source: "scontrol" };
}

/** The job from accounting (`sacct`), or forgotten where the cluster keeps none or has no such job. */
async function accounted(jobId: string, options: SlurmCallOptions): Promise<JobReading> {
  const result = await runSlurm("sacct", ["-n", "-P", "-X", "-j", jobId, "-o", SACCT_FIELDS], options);
  if (!result.ok) {
    if (result.failure === "refused" && saysAccountingDisabled(result.stderr)) return { kind: "forgotten" };
    return { kind: "unreachable", error: engineError(result, `read Slurm job ${jobId} from accounting`) };
  }
  const job = parseSacct(result.stdout);
  return job === null ? { kind: "forgotten" } : { kind: "known", job, source: "sacct" };
}

/**
 * Many jobs in one call (`squeue -h -t all -j <ids>`): those the controller knows, by id. A job absent
 * from the answer is not known to the controller: `readJob` asks accounting about it.
 */
export async function readJobs(
  jobIds: readonly string[],
  options: SlurmCallOptions = {},
): Promise<Map<string, SlurmJob> | { unreachable: CatherdError }> {
  const known = new Map<string, SlurmJob>();
  if (jobIds.length === 0) return known;
  for (const id of jobIds)
    if (!/^\d+$/.test(id)) throw new TypeError(`not a Slurm job id: ${JSON.stringify(id)}`);
  const result = await runSlurm(
    "squeue",
    ["-h", "-t", "all", "-j", jobIds.join(","), "-o", SQUEUE_FORMAT],
    options,
  );
  if (!result.ok) {
    // squeue refuses a list whose every id is unknown; a list with one known id answers for it.
    if (result.failure === "refused" && saysUnknownJob(result.stderr)) return known;
    return { unreachable: engineError(result, `read Slurm jobs ${jobIds.join(",")}`) };
  }
  for (const job of parseSqueue(result.stdout)) known.set(job.jobId, job);
  return known;
}
