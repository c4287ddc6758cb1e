import * as fs from "node:fs";
import { FILES, fileIn } from "../folder/layout.js";
import { FILE_MODE } from "../infra/atomic.js";
import { isSameProcess } from "../infra/process-identity.js";
import { type DispatchView, inspectDispatch } from "./inspect.js";
import { supervisorProgram } from "./launch.js";
import { startSupervisorProcess } from "./supervisor-process.js";

// Re-adoption (specs/supervisor.md, "Adoption"): a reader that finds an orphan — its supervisor dead, its
// agent alive — starts a new supervisor for the folder, which takes the dispatch over. However many
// readers race, one supervisor wins (supervisor/take-over.ts); the others bow out at once.

/** How long a reader waits for a supervisor to take the orphan over before it reports what it sees. */
export const ADOPTION_WAIT_MS = 10_000;
const ADOPTION_POLL_MS = 20;

/**
 * Whether the view is an orphan a supervisor can adopt: the agent named in proc.json is alive, by its pid
 * and a start time that could be read.
 */
export function isAdoptable(view: DispatchView): boolean {
  return (
    view.state === "orphaned" &&
    view.exit === null &&
    view.proc !== null &&
    view.proc.startTime !== null &&
    isSameProcess(view.proc.pid, view.proc.startTime)
  );
}

/**
 * Starts a supervisor for an adoptable orphan, waits (up to ADOPTION_WAIT_MS) until a live supervisor
 * has it — this one or a racing reader's — and returns the folder read again. Anything else is returned
 * as it is. An orphan without proc.json (its supervisor died right after the spawn) cannot be adopted:
 * only `cancel` ends it.
 */
export async function adoptIfOrphaned(view: DispatchView): Promise<DispatchView> {
  if (!isAdoptable(view)) return view;
  const outFd = fs.openSync(fileIn(view.dir, FILES.supervisorOut), "a", FILE_MODE);
  const started = startSupervisorProcess(supervisorProgram(), [view.dir], {
    stdin: "ignore",
    outFd,
    cwd: view.dir,
  });
  const spawnError = await started.spawned;
  started.child.unref();
  if (spawnError !== null) return view;
  const deadline = Date.now() + ADOPTION_WAIT_MS;
  for (;;) {
    const now = inspectDispatch(view.dir);
    // Adopted (running, stopping), or ended meanwhile (the adopter found the agent gone: lost).
    if (now.state !== "orphaned" || Date.now() >= deadline) return now;
    await new Promise((resolve) => setTimeout(resolve, ADOPTION_POLL_MS));
  }
}
