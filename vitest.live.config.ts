import { defineConfig } from "vitest/config";

// The live contract suite (npm run test:live, specs/live-suite.md): the real agent CLIs against catherd's
// mock model server. Not part of `npm test`, whose include is test/**/*.test.ts.
export default defineConfig({
  test: {
    include: ["test/live/**/*.live.ts"],
    globalSetup: ["test/helpers/fresh-build.setup.ts"],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One CLI per file; two files at a time on this two-core machine.
    maxWorkers: 2,
  },
});
