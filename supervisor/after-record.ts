import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { FILES, fileIn, placeOf } from "../src/folder/layout.js";
import { readLiveMarkers } from "../src/folder/markers.js";
import { FILE_MODE } from "../src/infra/atomic.js";
import { programFile } from "../src/infra/programs.js";
import type { SupervisorLog } from "./log.js";

/** However long the promoter takes, the supervisor waits no longer than this before it exits. */
export const PROMOTER_WAIT_MS = 60_000;

/**
 * Right after its record, a supervisor whose run has queued dispatches starts the promoter program
 * (src/dispatch/promoter-main.ts) on the run, so that the slot it frees is taken at once, and waits for it
 * (bounded). A run without a queue costs one read of its live markers. The promoter is detached: a
 * supervisor killed meanwhile leaves it running; a promoter that fails leaves the queue to the next
 * reader, which promotes too.
 */
export async function promoteAfterRecord(dir: string, log: SupervisorLog): Promise<void> {
  const place = placeOf(dir);
  if (place === null) return;
  if (!readLiveMarkers(path.join(place.runDir, "live")).some((m) => m.queued !== undefined)) return;
  let outFd: number;
  try {
    outFd = fs.openSync(fileIn(dir, FILES.supervisorOut), "a", FILE_MODE);
  } catch (error) {
    log("promoter-failed", { message: (error as Error).message });
    return;
  }
  const child = spawn(process.execPath, [programFile("promoter", import.meta.url), place.runDir], {
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
