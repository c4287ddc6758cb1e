import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { nextAttemptDir } from "../src/folder/chain.js";
import { FILES, fileIn, placeOf } from "../src/folder/layout.js";
import { readLiveMarkers } from "../src/folder/markers.js";
import { readFolderJson } from "../src/folder/read.js";
import { FILE_MODE } from "../src/infra/atomic.js";
import { type Clock, systemClock } from "../src/infra/clock.js";
import { okValue } from "../src/infra/json-file.js";
import { programFile } from "../src/infra/programs.js";
import type { SupervisorLog } from "./log.js";

/** However long the promoter takes, the supervisor waits no longer than this before it exits. */
export const PROMOTER_WAIT_MS = 60_000;

/**
 * Right after its record, a supervisor whose run has queued dispatches, or whose chain goes on (its record
 * names a `next`), starts the promoter program (src/dispatch/promoter-main.ts) on the run, so that the slot
 * it frees is taken at once and the hand-over done, and waits for it (bounded). A run without either
 * costs one read of its live markers. The promoter is detached: a
 * supervisor killed meanwhile leaves it running; a promoter that fails leaves the queue to the next
 * reader, which promotes too.
 */
export async function promoteAfterRecord(
  dir: string,
  log: SupervisorLog,
  clock: Pick<Clock, "wallNow" | "sleep"> = systemClock,
): Promise<void> {
  const place = placeOf(dir);
  if (place === null) return;
  const markers = readLiveMarkers(path.join(place.runDir, "live"));
  if (!markers.some((m) => m.queued !== undefined || m.handover === true)) return;
  await runPromoter(dir, place.runDir, log);
  // A timed retry of this chain waits in the queue until its time: this supervisor, holding nothing but a
  // timer, stays to promote it then (readers that come after that time promote it too).
  const notBefore = timedRetryOf(dir);
  if (notBefore === null) return;
  const waitMs = Math.min(Date.parse(notBefore) - clock.wallNow().getTime(), MAX_TIMED_RETRY_WAIT_MS);
  log("waiting-for-retry", { notBefore, waitMs: Math.max(0, Math.round(waitMs)) });
  if (waitMs > 0) await clock.sleep(waitMs);
  await runPromoter(dir, place.runDir, log);
}

/** The longest a supervisor stays for a timed retry: a chain's `--retry-within` is at most a day. */
export const MAX_TIMED_RETRY_WAIT_MS = 24 * 3600_000;

/** notBefore of the attempt this folder handed over to, while it still waits in the queue; else null. */
function timedRetryOf(dir: string): string | null {
  const next = nextAttemptDir(dir);
  if (next === null) return null;
  if (fs.existsSync(fileIn(next, FILES.promoted)) || fs.existsSync(fileIn(next, FILES.exit))) return null;
  return okValue(readFolderJson(next, FILES.queued))?.notBefore ?? null;
}

/** Starts the promoter program on the run and waits for it, at most PROMOTER_WAIT_MS. */
async function runPromoter(dir: string, runDir: string, log: SupervisorLog): Promise<void> {
  let outFd: number;
  try {
    outFd = fs.openSync(fileIn(dir, FILES.supervisorOut), "a", FILE_MODE);
  } catch (error) {
    log("promoter-failed", { message: (error as Error).message });
    return;
  }
  const child = spawn(process.execPath, [programFile("promoter", import.meta.url), runDir], {
    detached: true,
    stdio: ["ignore", outFd, outFd],
    cwd: dir,
  });
  fs.closeSync(outFd);
  const ended = await new Promise<string>((resolve) => {
    const timer = setTimeout(() => resolve("still running"), PROMOTER_WAIT_MS);
    timer.unref();
    child.once("error", (error) => resolve(`error: ${error.message}`));
    child.once("exit", (code, signal) => resolve(signal ?? `exit code ${code}`));
  });
  child.unref();
  log("promoter", { pid: child.pid ?? null, ended });
}
