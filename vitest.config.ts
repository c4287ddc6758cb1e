import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/fresh-build.setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    setupFiles: ["test/helpers/temp-cleanup.ts"],
    coverage: {
      // The v8 provider, extended to the CLI and supervisor processes the tests spawn from dist/bin
      // (test/helpers/child-coverage.ts): the supervisor, the infra and the commands are proven through
      // real processes, and their coverage counts against src/ and supervisor/ through the bundle's maps.
      provider: "custom",
      customProviderModule: "./test/helpers/coverage-provider.ts",
      include: ["src/**", "supervisor/**"],
      // src/web runs in the browser: its pure parts are tested in vitest, the rest in a real Chromium.
      exclude: ["src/backends/types.ts", "src/web/**"],
      reporter: ["text-summary", "json-summary"],
      // Floors a few points under what the suite measured (specs/testing.md, "Coverage"): the pure
      // layers, tested in-process, and the layers proven through real processes, whose figures move a
      // little from run to run (a process killed on purpose writes no coverage).
      thresholds: {
        lines: 88,
        statements: 86,
        functions: 87,
        branches: 75,
        "{src/domain,src/backends}/**": { lines: 90, statements: 90, functions: 85, branches: 75 },
        "src/infra/**": { lines: 86, statements: 81, functions: 93, branches: 69 },
        "src/dispatch/**": { lines: 87, statements: 85, functions: 87, branches: 76 },
        "src/folder/**": { lines: 82, statements: 81, functions: 74, branches: 72 },
        "supervisor/**": { lines: 82, statements: 81, functions: 74, branches: 72 },
      },
    },
  },
});
