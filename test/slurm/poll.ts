import { type JobReading, readJob } from "../../src/engines/slurm/job.js";

// Waits of the real-engine suite: each polls what the engine or the folder says, with a deadline.

/** Polls `check` every 100 ms until it returns a value other than undefined; throws after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

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
