#!/usr/bin/env node
// The detached supervisor program: `catherd supervise <dir>` and what `dispatch` launches. It loads only
// what supervision needs; the CLI's other commands are never imported here.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { systemDeps } from "./deps.js";
import { runSupervisor } from "./run.js";

/** Runs the supervisor on `dirArg`; resolves to the process exit code. */
export async function superviseMain(dirArg: string | undefined): Promise<number> {
  if (dirArg === undefined || dirArg === "") {
    process.stderr.write(
      "error E_INPUT_INVALID: missing <dispatch-dir>\nfix: catherd supervise <dispatch-dir>\n",
    );
    return 2;
  }
  const dir = path.resolve(dirArg);
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    process.stderr.write(
      `error E_INPUT_INVALID: ${dir} is not a folder\nfix: give the path of a dispatch folder\n`,
    );
    return 2;
  }
  const interrupt = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => interrupt.abort(signal);
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, onSignal);
  // The supervisor runs detached; a write to a closed stdout/stderr must not kill it.
  process.stdout.on("error", () => {});
  process.stderr.on("error", () => {});
  return runSupervisor(dir, systemDeps(), interrupt.signal);
}

const invokedDirectly =
  process.argv[1] !== undefined &&
  fs.realpathSync(process.argv[1]) === fs.realpathSync(fileURLToPath(import.meta.url));
if (invokedDirectly) {
  superviseMain(process.argv[2]).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(
        `error E_SUPERVISOR_ERROR: ${error instanceof Error ? error.stack : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
