import { makeDispatchId } from "../../domain/ids.js";
import { attemptName, type RacePick } from "../../domain/race/race-rules.js";
import { type DispatchRequest, type RawDispatchInput, validateDispatch } from "./dispatch-request.js";
import type { RaceAsked } from "./race-input.js";

// A race's attempts as requests (specs/dispatch.md, "A race"): the request as given, once per attempt of
// its own CLI, and once per `--also`, each validated as a dispatch of that CLI would be, each named
// `<race>.<k>` and marked with its race. Nothing is written here.

/** A race to admit: its name and id, its pick, and its attempts' requests in order (attempt k at k-1). */
export interface RacePlan {
  name: string;
  run: string;
  raceId: string;
  pick: RacePick;
  attempts: DispatchRequest[];
}

/**
 * The attempts of the race `request` asks for. An `--also` attempt is validated anew from the flags as
 * given with its backend and model (its executable from `$CATHERD_<B>_BIN` or PATH): on another CLI,
 * `--bin`, `--effort` and the arguments after `--` are left out, as a chain's next rung leaves them.
 * Without `--name`, the race is named `race-<the last six characters of its id>`.
 */
export function racePlan(
  raw: RawDispatchInput,
  request: DispatchRequest & { raceAsked: RaceAsked },
  raceId: string,
): RacePlan {
  const asked = request.raceAsked;
  const name = request.name ?? `race-${raceId.slice(-6)}`;
  const own = Array.from({ length: asked.same }, () => request);
  const others = asked.also.map((also) => {
    const same = also.backend === request.backend.id;
    return validateDispatch({
      ...raw,
      backend: also.backend,
      model: also.model ?? undefined,
      bin: same ? raw.bin : undefined,
      effort: same ? raw.effort : undefined,
      rest: same ? raw.rest : [],
      attempts: undefined,
      also: [],
      pick: undefined,
    });
  });
  const attempts = [...own, ...others].map((attempt, i) => ({
    ...attempt,
    name: attemptName(name, i + 1),
    raceAsked: null,
    race: { name, raceId, attempt: i + 1, pick: asked.pick },
  }));
  return { name, run: request.run, raceId, pick: asked.pick, attempts };
}

/** A race's id: as a dispatch id, it sorts by creation time (`20261206T224100Z-k3x9qa`). */
export function newRaceId(at: Date): string {
  return makeDispatchId(at, Math.random);
}
