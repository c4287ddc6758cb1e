import { afterAll } from "vitest";
import { removeTempDirs } from "./folders.js";

// Every test file's temp folders (helpers/folders.ts `tempDir`) go when the file is done, passed or not.
afterAll(removeTempDirs);
