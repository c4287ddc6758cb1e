import { defineConfig } from "vitest/config";

// The SSH suite (npm run test:ssh): a real sshd in a PID and UTS namespace of its own, started per file or
// per test by test/helpers/sshd.ts, standing in for another host. Not part of `npm test`, whose include is
// test/**/*.test.ts.
export default defineConfig({
  test: {
    include: ["test/ssh/**/*.ssh.ts"],
    // The SSH engine's tests will run catherd from dist/ over ssh: it must hold the current sources.
    globalSetup: ["test/helpers/fresh-build.setup.ts"],
    setupFiles: ["test/helpers/temp-cleanup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Each file has a rig of its own, and most of their time is spent waiting for a lock to go stale or a
    // dispatch to end, not on the CPU: three files at once keep the suite near a minute (vitest's default,
    // cores - 1, is one file at a time on a 2-core machine).
    maxWorkers: 3,
  },
});
