import { type JobReading, readJob } from "../../src/engines/slurm/job.js";
import { eventually } from "../helpers/wait.js";

// Waits of the real-engine suite: each polls what the engine or the folder says, with a deadline
// (`eventually`, the tests' own, passed on for the suite's files).

export { eventually };

/** Reads the job until `accept` takes the reading; the last reading is in the error past the deadline. */
export async function untilJob(
  jobId: string,
  what: string,
  accept: (reading: JobReading) => boolean,
  env: NodeJS.ProcessEnv,
): Promise<JobReading> {
  let last: JobReading | null = null;
  try {
    return await eventually(`job ${jobId} ${what}`, async () => {
      last = await readJob(jobId, { env });
      return accept(last) ? last : undefined;
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}; last read: ${JSON.stringify(last)}`);
  }
}

/** Accepts a job in this state. */
export const inState = (state: string) => (reading: JobReading) =>
  reading.kind === "known" && reading.job.state === state;
