import { SPEC_DEFAULTS } from "../domain/defaults.js";
import type { DispatchState } from "../domain/vocab.js";
import { handOverPending } from "../folder/chain.js";
import { runOf } from "../folder/layout.js";
import { requestCancel } from "../folder/write.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { waitUntil } from "../infra/wait-until.js";
import { stopChain } from "./queue/hand-over.js";
import { cancelQueued } from "./queue/promote.js";
import { type DispatchView, inspectDispatch } from "./read/inspect.js";
import { readDispatch } from "./reader.js";
import { stopOrphan } from "./settle/settle.js";
import { awaitRecords } from "./wait.js";

/**
 * `catherd cancel` (specs/cli.md): stops the dispatch in `dir` — for a chain, its last attempt, and the
 * chain goes on to no other. It reads through the reader gate without promoting (it must not start what
 * it cancels, nor hand over a chain it stops); the gate has an orphan adopted and a dead dispatch
 * recorded first. Then, by what it found:
 * - recorded, its chain's hand-over still due: the chain is stopped there (next.json `stopped`);
 * - queued: recorded cancelled under the run's lock, never started — unless a promotion got there
 *   first, and then it is cancelled as the live dispatch it has become;
 * - submitted to an engine and its supervisor not up yet (the job pending, or starting on its node): the
 *   cancel file, then the engine is asked to end it, and once the engine says it ended, it
 *   is recorded as the engine ended it (cancelled) — at once for a pending job;
 * - orphaned (its agent could not be adopted): stopped here, each process only if its pid and start time
 *   read back exactly, and recorded cancelled;
 * - starting, running, stopping or verifying: the cancel file, which its supervisor acts on (a check is
 *   stopped, and the dispatch recorded cancelled); with `wait`, until the record.
 * Returns the folder as it is afterwards.
 */
export async function cancelDispatch(
  dir: string,
  { wait = false, clock = systemClock }: { wait?: boolean; clock?: Clock } = {},
): Promise<DispatchView> {
  let view = await readDispatch(dir, { clock, chain: "last", promote: false });
  const run = runOf(view.dir);
  if (view.state === "recorded" && handOverPending(view.dir, view.record) && run !== null) {
    await stopChain(run, view.dir, clock);
    return inspectDispatch(view.dir, { clock });
  }
  if (view.state === "queued" && view.placement === null && run !== null) {
    view =
      (await cancelQueued(run, view.dir, clock)) ?? (await readDispatch(view.dir, { clock, promote: false }));
  }
  if (view.placement !== null && view.supervisor === null && view.record === null && view.exit === null) {
    view = await cancelJob(view, clock);
    if (wait && view.record === null) await awaitRecords([view.dir], { any: false, timeoutMs: null, clock });
    return readDispatch(view.dir, { clock, promote: false });
  }
  if (view.state === "orphaned") {
    return stopOrphan(view, view.spec?.killGraceMs ?? SPEC_DEFAULTS.killGraceMs, clock);
  }
  if (LIVE_SUPERVISED.has(view.state)) {
    requestCancel(view.dir, clock.wallNow());
    if (wait) await awaitRecords([view.dir], { any: false, timeoutMs: null, clock });
    return inspectDispatch(view.dir, { clock });
  }
  return view;
}

/** The states whose supervisor acts on the cancel file: its agent or its check (`--verify`) runs. */
const LIVE_SUPERVISED: ReadonlySet<DispatchState> = new Set(["starting", "running", "stopping", "verifying"]);

/** What a cancel did, as `catherd cancel --json` and the dashboard answer it. */
export interface CancelledSummary {
  name: string | null;
  dispatchId: string;
  dir: string;
  state: DispatchState;
  status: string | null;
}

/** The summary of the folder a cancel returned. */
export function cancelledSummary(view: DispatchView): CancelledSummary {
  return {
    name: view.admit?.name ?? null,
    dispatchId: view.dispatchId,
    dir: view.dir,
    state: view.state,
    status: view.record?.status ?? null,
  };
}

/** How long cancel waits for the engine to say a job it cancelled has ended: a starting job's KillWait. */
export const ENGINE_CANCEL_WAIT_MS = 45_000;
const ENGINE_CANCEL_POLL_MS = 200;

/**
 * Cancels the job of a placed dispatch whose supervisor has not come up: the cancel file first (a
 * supervisor that comes up anyway sees it and stops at once), then the engine's cancel, then the reader gate until
 * the engine says the job ended — which records it, in the engine's words — or a supervisor came up
 * after all (it records the cancel itself). Throws the engine's error when it refuses the cancel.
 */
async function cancelJob(view: DispatchView, clock: Clock): Promise<DispatchView> {
  const placement = view.placement;
  if (placement === null) return view;
  requestCancel(view.dir, clock.wallNow());
  const { engineNamed } = await import("../engines/engine-registry.js");
  await (await engineNamed(placement.engine)).cancel(placement, view.dir);
  let last = view;
  await waitUntil(
    async () => {
      last = await readDispatch(view.dir, { clock, promote: false });
      return last.record !== null || last.supervisor !== null ? true : undefined;
    },
    { clock, deadline: clock.now() + ENGINE_CANCEL_WAIT_MS, pollMs: ENGINE_CANCEL_POLL_MS },
  );
  return last;
}
