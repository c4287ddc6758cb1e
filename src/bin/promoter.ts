#!/usr/bin/env node
// The promoter program: `node promoter.js <run-dir> [--when-released] [--in-engine-job]`. A supervisor starts it when the run
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
import { StandbyReserve } from "../dispatch/start/standby-reserve.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { runPathsOfRunDir } from "../infra/paths.js";
import { IN_ENGINE_JOB_FLAG, WHEN_RELEASED_FLAG } from "../infra/programs.js";
import { reportError } from "../infra/report-error.js";
import { waitUntil, wakeOnEvents } from "../infra/wait-until.js";

/** However long the stop takes, a promoter waits no longer than this for its release. */
const RELEASE_WAIT_MAX_MS = 15 * 60_000;

async function promoterMain(args: readonly string[], clock: Clock): Promise<number> {
  const [runDir, ...flags] = args;
  if (runDir === undefined || flags.some((f) => f !== WHEN_RELEASED_FLAG && f !== IN_ENGINE_JOB_FLAG))
    throw new TypeError(`usage: promoter <run-dir> [${WHEN_RELEASED_FLAG}] [${IN_ENGINE_JOB_FLAG}]`);
  const run = runPathsOfRunDir(runDir);
  if (run === null) throw new TypeError(`${runDir} is not a run folder (<home>/runs/<run>)`);
  const placedOnly = flags.includes(IN_ENGINE_JOB_FLAG);
  // In an engine's job it starts no local supervisor: no standby either.
  const standbys = new StandbyReserve();
  if (!placedOnly) standbys.prime(run.home);
  const standby = placedOnly ? null : standbys.take(run.home);
  try {
    const [{ promoteRun }, { doDutiesIn }] = await Promise.all([
      import("../dispatch/queue/promote.js"),
      import("../dispatch/reader.js"),
    ]);
    if (flags.includes(WHEN_RELEASED_FLAG)) await released(clock);
    const { withDuties } = await promoteRun(run, { clock, standby, placedOnly });
    await doDutiesIn(withDuties, clock);
  } finally {
    standbys.refill(run.home, standby);
    standbys.close();
  }
  return 0;
}

/** Resolves at the first byte on stdin, its end or error, or after RELEASE_WAIT_MAX_MS. */
async function released(clock: Clock): Promise<void> {
  const events = ["data", "end", "error"] as const;
  let released = false;
  const release = () => {
    released = true;
  };
  for (const event of events) process.stdin.once(event, release);
  process.stdin.resume();
  await waitUntil(() => (released ? true : undefined), {
    clock,
    deadline: clock.now() + RELEASE_WAIT_MAX_MS,
    pollMs: RELEASE_WAIT_MAX_MS,
    watch: wakeOnEvents(process.stdin, events),
  });
  process.stdin.pause();
}

promoterMain(process.argv.slice(2), systemClock).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(reportError(error, false)),
);
