import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    setupFiles: ["test/helpers/temp-cleanup.ts"],
    coverage: {
      provider: "v8",
      // The floor covers the code tested in-process: the pure rules and the backends. The supervisor, the
      // infra and the commands are proven through real processes (dist/), which v8 coverage does not see.
      include: ["src/domain/**", "src/backends/**"],
      exclude: ["src/backends/types.ts"],
      reporter: ["text-summary"],
      thresholds: { lines: 90, statements: 90, functions: 85, branches: 75 },
    },
  },
});
