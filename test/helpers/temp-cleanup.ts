import { afterAll } from "vitest";
import { removeTempDirs } from "./folders.js";

// A setup file of every vitest config: after each test file, the temp folders its tests made are removed
// (homes, dispatch folders, scenarios), whether the tests passed or not. The tests' own afterEach hooks
// have reaped their processes by then.
afterAll(() => {
  removeTempDirs();
});
