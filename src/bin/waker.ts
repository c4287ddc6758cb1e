#!/usr/bin/env node
// The waker program: `node waker.js <home>`. Started, detached, by whoever parks work for an account's
// reset or finds some parked (specs/quota.md, "At the reset"); it holds the home's waker lock while the
// home's parked index names a run, starts each run's parked work when its time comes, and exits when
// nothing is parked. A second waker finds the lock held and exits at once. Exit 0, or 1 with the error.
import { wakeLoop } from "../dispatch/waker.js";
import { systemClock } from "../infra/clock.js";
import { reportError } from "../infra/report-error.js";

const [home] = process.argv.slice(2);
if (home === undefined || home === "") {
  process.stderr.write("usage: waker <home>\n");
  process.exit(2);
}
wakeLoop(home, systemClock).then(
  () => process.exit(0),
  (error: unknown) => process.exit(reportError(error, false)),
);
