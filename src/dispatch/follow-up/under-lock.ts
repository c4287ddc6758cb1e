import * as path from "node:path";
import { CatherdError } from "../../domain/errors.js";
import type { LiveSet } from "../admit/live-set.js";
import type { DispatchRequest } from "../request/dispatch-request.js";
import { stillLive } from "./follow-up-request.js";
import { newestTurnDir } from "./turn.js";

/**
 * Under the run's admission lock (specs/dispatch.md, "Following up"): a follow-up is admitted only while
 * the turn it continues is still its name's newest and nothing of the name is live. So of two follow-ups
 * of one turn, however close, the second is refused — E_ADMIT_DUPLICATE, with or without --queue: it
 * would continue a thread that has moved on (or is moving) without it.
 */
export function refuseStaleFollowUp(request: DispatchRequest, live: LiveSet): void {
  const of = request.followUp;
  if (of == null || request.name === null) return;
  const name = request.name;
  for (const marker of live.markers.filter((m) => m.name === name)) {
    if (live.isLive(marker)) throw stillLive(name, marker.dispatchId, live.view(marker).state);
  }
  const newest = newestTurnDir(live.run, name);
  const newestId = newest === null ? null : path.basename(newest);
  if (newestId !== of.dispatchId) {
    throw new CatherdError(
      "E_ADMIT_DUPLICATE",
      `--follow-up ${name}: the conversation moved on from ${of.dispatchId} while this follow-up was admitted (its newest turn is ${newestId ?? "gone"})`,
      { fix: `read the newest turn (catherd result ${name}), then follow up again` },
    );
  }
}
