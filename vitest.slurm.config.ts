import { defineConfig } from "vitest/config";

// The real-engine suite (npm run test:slurm, specs/placement.md "Tests"): a one-node Slurm cluster started
// by test/slurm/cluster.setup.ts. Not part of `npm test`, whose include is test/**/*.test.ts.
export default defineConfig({
  test: {
    include: ["test/slurm/**/*.slurm.ts"],
    globalSetup: ["test/helpers/fresh-build.setup.ts", "test/slurm/cluster.setup.ts"],
    setupFiles: ["test/helpers/temp-cleanup.ts"],
    testTimeout: 120_000,
    hookTimeout: 90_000,
    pool: "forks",
    // One cluster, whose licenses the files would share: one file at a time.
    fileParallelism: false,
  },
});
