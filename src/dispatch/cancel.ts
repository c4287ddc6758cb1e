import { SPEC_DEFAULTS } from "../domain/defaults.js";
import { handOverPending } from "../folder/chain.js";
import { runOf } from "../folder/layout.js";
import { requestCancel } from "../folder/write.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { awaitRecords } from "./await-records.js";
import { stopChain } from "./queue/hand-over.js";
import { cancelQueued } from "./queue/promote.js";
import { type DispatchView, inspectDispatch } from "./read/inspect.js";
import { readDispatch } from "./reader.js";
import { stopOrphan } from "./settle/settle.js";

/**
 * `catherd cancel` (specs/cli.md): stops the dispatch in `dir` — for a chain, its last attempt, and the
 * chain goes on to no other. It reads through the reader gate without promoting (it must not start what
 * it cancels, nor hand over a chain it stops); the gate has an orphan adopted and a dead dispatch
 * recorded first. Then, by what it found:
 * - recorded, its chain's hand-over still due: the chain is stopped there (next.json `stopped`);
 * - queued: recorded cancelled under the run's lock, never started — unless a promotion got there
 *   first, and then it is cancelled as the live dispatch it has become;
 * - orphaned (its agent could not be adopted): stopped here, each process only if its pid and start time
 *   read back exactly, and recorded cancelled;
 * - starting, running or stopping: the cancel file, which its supervisor acts on; with `wait`, until the
 *   record.
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
  if (view.state === "queued" && run !== null) {
    view = (await cancelQueued(run, view.dir, clock)) ?? inspectDispatch(view.dir, { clock });
  }
  if (view.state === "orphaned") {
    return stopOrphan(view, view.spec?.killGraceMs ?? SPEC_DEFAULTS.killGraceMs, clock);
  }
  if (view.state === "starting" || view.state === "running" || view.state === "stopping") {
    requestCancel(view.dir, clock.wallNow());
    if (wait) await awaitRecords([view.dir], { any: false, timeoutMs: null, clock });
    return inspectDispatch(view.dir, { clock });
  }
  return view;
}
