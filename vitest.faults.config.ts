import { defineConfig } from "vitest/config";

// The fault matrix (npm run test:faults, specs/reliability.md): real supervisors killed, frozen, starved of
// disk and fed garbage. Not part of `npm test`, whose include is test/**/*.test.ts.
export default defineConfig({
  test: {
    include: ["test/faults/**/*.fault.ts"],
    globalSetup: ["test/helpers/fresh-build.setup.ts", "test/faults/figures.setup.ts"],
    setupFiles: ["test/helpers/temp-cleanup.ts"],
    // Heavy trials queue for one another (test/faults/kit.ts `heavy`), and the soak alone takes minutes.
    testTimeout: 900_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two files at a time on this two-core machine; heavy trials still run one at a time.
    maxWorkers: 2,
  },
});
