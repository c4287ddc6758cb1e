import { CatherdError } from "../domain/errors.js";
import type { RecordFile } from "../domain/schemas.js";
import { handOverPending } from "../folder/chain.js";
import { FILES } from "../folder/layout.js";
import { markSeen } from "../folder/markers.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { type AttemptSummary, chainAttempts, chainStop } from "./read/attempts.js";
import { type DispatchView, problemOf } from "./read/inspect.js";
import { readDispatch } from "./reader.js";

/** A finished dispatch as `result` gives it: for a chain, its last attempt once the chain has ended. */
export interface Result {
  view: DispatchView;
  record: RecordFile;
  /** Every attempt of its chain, first to last (one for a plain dispatch). */
  attempts: AttemptSummary[];
  /** Why the chain stopped before the rung its record named, when it did. */
  stopped: ReturnType<typeof chainStop>;
}

/**
 * The result of the dispatch in `dir`, read through the reader gate (following its chain, doing a due
 * hand-over) and marked seen. E_NOT_RECORDED while it, or its chain, goes on; the record's own problem
 * (torn, newer) when it cannot be read.
 */
export async function resultOf(dir: string, clock: Clock = systemClock): Promise<Result> {
  const view = await readDispatch(dir, { clock, chain: "last" });
  const problem = problemOf(view, FILES.record);
  if (problem !== undefined) throw problem;
  const name = view.admit?.name ?? view.dispatchId;
  if (view.record === null || handOverPending(view.dir, view.record)) {
    const attempt = view.admit?.attempt ?? 1;
    const which =
      attempt > 1
        ? `its attempt ${attempt} (${view.admit?.backend ?? "?"}) is ${view.state}`
        : `it is ${view.state}`;
    throw new CatherdError(
      "E_NOT_RECORDED",
      view.record === null
        ? `${name} has no record yet (${which})`
        : `${name} has not ended: its chain goes on to ${view.record.next?.backend ?? "?"}`,
      { fix: `catherd wait ${name}` },
    );
  }
  markSeen(view.dir, clock.wallNow());
  return { view, record: view.record, attempts: chainAttempts(view.dir), stopped: chainStop(view.dir) };
}
