import { defineConfig } from "vitest/config";

/**
 * The tests that start no process and touch no shared state of their process (environment, working
 * folder): the pure layers. They share threads, their modules loaded once per thread.
 */
const PURE = [
  "test/domain/**/*.test.ts",
  "test/engines/slurm-output.test.ts",
  "test/engines/slurm-states.test.ts",
  "test/engines/slurm-submit.test.ts",
  "test/backends/**/*.test.ts",
  "test/ui/page/**/*.test.ts",
  "test/schemas.test.ts",
  "test/architecture.test.ts",
  "test/cli/spend-text.test.ts",
  "test/cli/mcp-input.test.ts",
];

/**
 * Files run at once. The real-process tests spend most of their time waiting for files, lines and exits,
 * not on the CPU: more of them than cores keeps both cores busy (vitest's default, cores - 1, is one file
 * at a time on a 2-core machine). CATHERD_TEST_WORKERS overrides it.
 */
const WORKERS = Number(process.env.CATHERD_TEST_WORKERS ?? 4);

export default defineConfig({
  test: {
    globalSetup: ["test/helpers/fresh-build.setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    setupFiles: ["test/helpers/temp-cleanup.ts"],
    maxWorkers: WORKERS,
    reporters: ["default", "./test/helpers/slowest-files.ts"],
    projects: [
      { extends: true, test: { name: "pure", include: PURE, pool: "threads", isolate: false } },
      // Each file in a process of its own: they start real processes, set variables, change folders. A
      // test's deadline says only how soon a hung test is reported: on a loaded machine a test of a dozen
      // commands, each a node start, takes well over the pure tests' 30 s.
      {
        extends: true,
        test: {
          name: "processes",
          include: ["test/**/*.test.ts"],
          exclude: PURE,
          pool: "forks",
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
    ],
    coverage: {
      // The v8 provider, extended to the CLI and supervisor processes the tests spawn from dist/bin
      // (test/helpers/child-coverage.ts): the supervisor, the infra and the commands are proven through
      // real processes, and their coverage counts against src/ and supervisor/ through the bundle's maps.
      provider: "custom",
      customProviderModule: "./test/helpers/coverage-provider.ts",
      include: ["src/**", "supervisor/**"],
      // src/ui/page runs in the browser: its pure parts are tested in vitest, the rest in a real Chromium;
      // src/ui/wire.ts holds types only.
      exclude: ["src/backends/types.ts", "src/ui/wire.ts", "src/ui/page/**"],
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
        "src/dispatch/**": { lines: 87, statements: 85, functions: 87, branches: 77 },
        "src/folder/**": { lines: 82, statements: 81, functions: 74, branches: 72 },
        "src/engines/**": { lines: 84, statements: 82, functions: 88, branches: 74 },
        "supervisor/**": { lines: 82, statements: 81, functions: 74, branches: 72 },
      },
    },
  },
});
