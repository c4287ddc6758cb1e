import type { TestProject } from "vitest/node";
import { type SlurmCluster, slurmUnavailable, startSlurmCluster } from "../helpers/slurm-cluster.js";

// The global setup of `npm run test:slurm`: one real cluster for the whole suite, stopped by its teardown
// whether the tests passed or not. Where Slurm cannot start (not root, no munge), the suite is skipped with
// the reason — except under CI, which always runs it (.ci/run installs slurm-wlm and munge).

declare module "vitest" {
  export interface ProvidedContext {
    /** The running cluster, or why there is none. */
    slurm: { cluster: SlurmCluster } | { unavailable: string };
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const why = slurmUnavailable();
  if (why !== null) {
    if (process.env.CI !== undefined && process.env.CI !== "") {
      throw new Error(`the Slurm suite must run under CI, but ${why}`);
    }
    console.warn(`skipping the Slurm suite: ${why}`);
    project.provide("slurm", { unavailable: why });
    return undefined;
  }
  const { stop, ...cluster } = await startSlurmCluster();
  console.info(`test Slurm cluster ${cluster.clusterName} up in ${cluster.startMs} ms`);
  project.provide("slurm", { cluster });
  return stop;
}
