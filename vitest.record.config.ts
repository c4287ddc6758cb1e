import { defineConfig } from "vitest/config";

// Recordings of the real CLIs against the mock model (npm run record:codex-app-server, specs/live-suite.md):
// they write fixtures, so no suite runs them; each names its output folder in its environment.
export default defineConfig({
  test: {
    include: ["test/live/**/*.record.ts"],
    globalSetup: ["test/helpers/fresh-build.setup.ts"],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: "forks",
    fileParallelism: false,
  },
});
