#!/usr/bin/env node
// The promoter program: `node promoter.js <run-dir>`. A supervisor starts it right after writing its record
// when the run has queued dispatches, so that the slot it frees is taken at once (specs/dispatch.md, "The
// queue"). It lives here, not in the supervisor, because promotion is admission's work: the supervisor
// only starts a program. Exit 0 when it promoted (or had nothing to do), 1 with the error on stderr.
import * as path from "node:path";
import { runPaths } from "../infra/paths.js";
import { reportError } from "../infra/report-error.js";
import { promoteRun } from "./queue.js";

async function promoterMain(runDir: string | undefined): Promise<number> {
  if (runDir === undefined) throw new TypeError("usage: promoter <run-dir>");
  const resolved = path.resolve(runDir);
  if (path.basename(path.dirname(resolved)) !== "runs")
    throw new TypeError(`${resolved} is not a run folder`);
  await promoteRun(runPaths(path.dirname(path.dirname(resolved)), path.basename(resolved)));
  return 0;
}

promoterMain(process.argv[2]).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(reportError(error, false)),
);
