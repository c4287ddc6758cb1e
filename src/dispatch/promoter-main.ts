#!/usr/bin/env node
// The promoter program: `node promoter.js <run-dir>`. A supervisor starts it right after writing its record
// when the run has queued dispatches, so that the slot it frees is taken at once (specs/dispatch.md, "The
// queue"). It lives here, not in the supervisor, because promotion is admission's work: the supervisor
// only starts a program. Exit 0 when it promoted (or had nothing to do), 1 with the error on stderr.
//
// Like `dispatch`, it starts a standby supervisor first thing, before loading promotion's modules, so
// that the two node start-ups overlap instead of following each other (specs/performance.md, "The queue").
import * as path from "node:path";
import { runPaths } from "../infra/paths.js";
import { reportError } from "../infra/report-error.js";
import { dismiss, startStandbySupervisor } from "./standby.js";

async function promoterMain(runDir: string | undefined): Promise<number> {
  if (runDir === undefined) throw new TypeError("usage: promoter <run-dir>");
  const resolved = path.resolve(runDir);
  if (path.basename(path.dirname(resolved)) !== "runs")
    throw new TypeError(`${resolved} is not a run folder`);
  const home = path.dirname(path.dirname(resolved));
  const run = runPaths(home, path.basename(resolved));
  const standby = startStandbySupervisor(home);
  try {
    const { promoteRun } = await import("./queue.js");
    await promoteRun(run, { standby });
  } finally {
    if (standby !== null) dismiss(standby);
  }
  return 0;
}

promoterMain(process.argv[2]).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(reportError(error, false)),
);
