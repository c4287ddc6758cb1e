import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { FILE_MODE } from "../infra/atomic.js";
import { programFile } from "../infra/programs.js";
import { wakerLock } from "./home-files.js";
import { parkedRuns } from "./parked.js";

// Starting the home's waker (specs/quota.md, "At the reset"): the one process that lives while work is
// parked and starts it at its time. Anyone who parks work, or finds parked work, makes sure one runs;
// the waker itself holds waker.lock, so a second one started at the same moment exits at once.

/** How long the waker's lock stays fresh without a refresh: a waker dead this long is replaced. */
export const WAKER_LOCK_STALE_MS = 30_000;

/** Whether a waker holds the home's lock (fresh: its holder refreshed it within the stale time). */
export function wakerAlive(home: string, nowMs: number): boolean {
  const stat = fs.statSync(wakerLock(home), { throwIfNoEntry: false });
  return stat !== undefined && nowMs - stat.mtimeMs < WAKER_LOCK_STALE_MS;
}

/**
 * Starts the waker, detached, when the home has parked work and no waker is alive; its output goes to
 * `<home>/waker.log`. Returns its pid, or null when none was started.
 */
export function ensureWaker(home: string, nowMs: number = Date.now()): number | null {
  // Test-only: a machine just rebooted, where nothing runs until the first command (specs/testing.md).
  if (process.env.CATHERD_TEST_ONLY_NO_WAKER === "1") return null;
  if (parkedRuns(home).length === 0 || wakerAlive(home, nowMs)) return null;
  const out = fs.openSync(path.join(home, "waker.log"), "a", FILE_MODE);
  try {
    const child = spawn(process.execPath, [programFile("waker", import.meta.url), home], {
      detached: true,
      stdio: ["ignore", out, out],
      cwd: home,
    });
    child.on("error", () => {});
    child.unref();
    return child.pid ?? null;
  } finally {
    fs.closeSync(out);
  }
}
