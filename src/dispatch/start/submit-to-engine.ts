import { CatherdError, isCatherdError } from "../../domain/errors.js";
import type { AdmitPlacement } from "../../domain/schemas.js";
import type { Submitted } from "../../engines/engine.js";
import { engineNamed } from "../../engines/engine-registry.js";
import { placeOf } from "../../folder/layout.js";
import type { Clock } from "../../infra/clock.js";
import { recordSubmitFailure } from "../settle/settle.js";

// Placing a dispatch's supervisor on its engine (specs/placement.md): the engine runs the very supervisor
// program a local launch starts, in the dispatch folder; once it has taken it, placement.json names what
// it took. Loaded only for a dispatch placed so: a local dispatch never loads an engine's code.

/**
 * Hands the supervisor of `dir` (`command`: the supervisor program on the folder) to the engine its
 * admission named. A submission the engine refuses (or that cannot be made: not installed, no answer)
 * records the dispatch `spawn-failed` with the engine's words and throws that error: the folder never
 * looks placed when it is not. One whose host did not answer (E_ENGINE_UNREACHABLE: nothing started
 * there) is not recorded: that error is thrown for the caller to put it back in the queue.
 */
export async function submitSupervisor(
  dir: string,
  placement: AdmitPlacement,
  command: readonly string[],
  clock: Clock,
): Promise<Submitted> {
  const engine = await engineNamed(placement.engine);
  try {
    return await engine.submit(dir, placement, command, clock);
  } catch (error) {
    if (!isCatherdError(error)) throw error;
    // Nothing started there: the caller puts it back in the queue (queue/requeue.ts), never a record.
    if (error.code === "E_ENGINE_UNREACHABLE") throw error;
    await recordSubmitFailure(dir, error, clock);
    const what = `dispatch ${placeOf(dir)?.dispatchId ?? dir} recorded as spawn-failed`;
    throw new CatherdError(error.code, `${error.message} (${what})`, {
      ...(error.fix === undefined ? {} : { fix: error.fix }),
      cause: error,
    });
  }
}
