import { FILES } from "../../folder/layout.js";
import type { Clock } from "../../infra/clock.js";
import { isSameProcess } from "../../infra/process-identity.js";
import { waitUntil, watchFolders } from "../../infra/wait-until.js";
import { type DispatchView, inspectDispatch } from "../read/inspect.js";
import { startGivenSupervisor } from "./standby.js";

// Re-adoption (specs/supervisor.md, "Adoption"): a reader that finds an orphan — its supervisor dead, its
// agent alive — or a check (`--verify`) whose supervisor died starts a new supervisor for the folder, which
// takes the dispatch over. However many
// readers race, one supervisor wins (supervisor/take-over.ts); the others bow out at once.

/** How long a reader waits for a supervisor to take the orphan over before it reports what it sees. */
export const ADOPTION_WAIT_MS = 10_000;
const ADOPTION_POLL_MS = 20;

/**
 * Starts a supervisor for an orphan whose duty is `adopt` (its agent named in proc.json alive, by pid and
 * start time, checked again here), waits (up to ADOPTION_WAIT_MS) until a live supervisor has it — this
 * one or a racing reader's — and returns the folder read again. Anything else is returned as it is.
 */
export async function adoptOrphan(view: DispatchView, clock: Clock): Promise<DispatchView> {
  if (view.duty !== "adopt" || !(view.state === "verifying" || agentStillAlive(view))) return view;
  const started = startGivenSupervisor(view.dir);
  const spawnError = await started.spawned;
  started.child.unref();
  if (spawnError !== null) return view;
  let last = view;
  await waitUntil(
    () => {
      last = inspectDispatch(view.dir, { clock });
      // Adopted (running, stopping, verifying under its new supervisor), or ended meanwhile (the adopter
      // found the agent gone: lost).
      return last.duty !== "adopt" ? true : undefined;
    },
    {
      clock,
      deadline: clock.now() + ADOPTION_WAIT_MS,
      pollMs: ADOPTION_POLL_MS,
      watch: watchFolders([view.dir], [FILES.supervisor, FILES.exit, FILES.record]),
    },
  );
  return last;
}

/** The orphan's agent named in proc.json is alive, by pid and start time, checked again here. */
function agentStillAlive(view: DispatchView): boolean {
  const proc = view.proc;
  return proc !== null && proc.startTime !== null && isSameProcess(proc.pid, proc.startTime);
}
