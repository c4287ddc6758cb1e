import { afterAll, afterEach, beforeEach } from "vitest";
import { openTestScope, settleTempDirs } from "./folders.js";

// A setup file of every vitest config. Its hooks are registered first, so its afterEach runs after the
// test file's own (they run in reverse order): the file has reaped and counted what it started by then.
// After each test, the temp folders it made (homes, dispatch folders, repositories, scenarios) are removed
// once no process carries them, and the test fails naming any that outlived it (test/helpers/folders.ts,
// `settleTempDirs`); after the file, those its hooks made outside any test.
beforeEach(() => {
  openTestScope();
});

afterEach(async () => {
  await settleTempDirs("test");
}, 60_000);

afterAll(async () => {
  await settleTempDirs("file");
}, 60_000);
