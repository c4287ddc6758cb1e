import { afterAll, afterEach, beforeEach, type TestContext } from "vitest";
import { openTestScope, settleTempDirs } from "./folders.js";

// A setup file of the gate's, the fault matrix's and the Slurm suite's configs. Its hooks are registered
// first, so its afterEach runs after the test file's own (they run in reverse order): the file has reaped
// and counted what it started by then. After each test, the temp folders it made (homes, dispatch
// folders, repositories, scenarios) are removed once no process carries them, and the test fails naming
// any that outlived it (test/helpers/folders.ts, `settleTempDirs`); after the file, those its hooks made
// outside any test. Tests that run concurrently (`describe.concurrent`) cannot tell their folders apart:
// theirs are the file's, settled after it.
beforeEach((context) => {
  if (!runsConcurrently(context)) openTestScope();
});

afterEach(async (context) => {
  if (!runsConcurrently(context)) await settleTempDirs("test");
}, 60_000);

afterAll(async () => {
  await settleTempDirs("file");
}, 60_000);

/** Whether the test, or a suite around it, runs concurrently with others. */
function runsConcurrently(context: TestContext): boolean {
  let task: { concurrent?: boolean; suite?: unknown } | undefined = context.task;
  while (task !== undefined) {
    if (task.concurrent === true) return true;
    task = task.suite as typeof task;
  }
  return false;
}
