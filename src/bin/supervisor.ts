#!/usr/bin/env node
// The supervisor program's entry (dist/bin/supervisor.js): the compile cache first, then the program
// (supervisor/supervisor-main.ts), so that the cache serves every module it loads. Imported rather than run (as the
// benchmark's import probe does), it does nothing.
import * as fs from "node:fs";
import { fileURLToPath } from "node:url";
import { enableCompileCache } from "../infra/compile-cache.js";

const invokedDirectly =
  process.argv[1] !== undefined &&
  fs.realpathSync(process.argv[1]) === fs.realpathSync(fileURLToPath(import.meta.url));
if (invokedDirectly) {
  enableCompileCache();
  const { runSupervisorProgram } = await import("../../supervisor/supervisor-main.js");
  runSupervisorProgram(process.argv.slice(2));
}
