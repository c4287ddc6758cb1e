#!/usr/bin/env node
// The promoter program: `node promoter.js <run-dir> [--when-released]`. A supervisor starts it when the run
// has queued dispatches or its chain goes on, so that the slot it frees is taken at once and the hand-over
// done (specs/dispatch.md, "The queue"). It lives here, not in the supervisor, because promotion is
// admission's work: the supervisor only starts a program. Exit 0 when it promoted (or had nothing to do),
// 1 with the error on stderr.
//
// Like `dispatch`, it starts a standby supervisor first thing, before loading promotion's modules, so
// that the two node start-ups overlap instead of following each other. With --when-released it then waits
// until its stdin gives a byte or ends: a supervisor starts it that way as soon as its stop begins, and
// releases it right after its record (or dies, which closes the pipe too), so that both start-ups are
// done by the time the slot is free (specs/performance.md, "The queue").
import * as path from "node:path";
import { runPaths } from "../infra/paths.js";
import { WHEN_RELEASED_FLAG } from "../infra/programs.js";
import { reportError } from "../infra/report-error.js";
import { dismiss, startStandbySupervisor } from "./standby.js";

/** However long the stop takes, a promoter waits no longer than this for its release. */
const RELEASE_WAIT_MAX_MS = 15 * 60_000;

async function promoterMain(args: readonly string[]): Promise<number> {
  const [runDir, flag] = args;
  if (runDir === undefined || (flag !== undefined && flag !== WHEN_RELEASED_FLAG))
    throw new TypeError(`usage: promoter <run-dir> [${WHEN_RELEASED_FLAG}]`);
  const resolved = path.resolve(runDir);
  if (path.basename(path.dirname(resolved)) !== "runs")
    throw new TypeError(`${resolved} is not a run folder`);
  const home = path.dirname(path.dirname(resolved));
  const run = runPaths(home, path.basename(resolved));
  const standby = startStandbySupervisor(home);
  try {
    const { promoteRun } = await import("./queue.js");
    if (flag === WHEN_RELEASED_FLAG) await released();
    await promoteRun(run, { standby });
  } finally {
    if (standby !== null) dismiss(standby);
  }
  return 0;
}

/** Resolves at the first byte on stdin, its end or error, or after RELEASE_WAIT_MAX_MS. */
function released(): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, RELEASE_WAIT_MAX_MS);
    function done() {
      clearTimeout(timer);
      process.stdin.pause();
      resolve();
    }
    process.stdin.once("data", done).once("end", done).once("error", done).resume();
  });
}

promoterMain(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(reportError(error, false)),
);
