import { adoptIfOrphaned, isAdoptable } from "../dispatch/adopt.js";
import { awaitRecords } from "../dispatch/await-records.js";
import { stopChain } from "../dispatch/hand-over.js";
import { inspectDispatch } from "../dispatch/inspect.js";
import { cancelQueued, runPathsOfPlace } from "../dispatch/queue.js";
import { settleIfDead, stopOrphan } from "../dispatch/settle.js";
import { SPEC_DEFAULTS } from "../domain/defaults.js";
import type { DispatchState } from "../domain/vocab.js";
import { handOverPending, lastAttemptDir } from "../folder/chain.js";
import { placeOf } from "../folder/layout.js";
import { requestCancel } from "../folder/write.js";
import type { Command } from "./kit.js";
import { dispatchDirOf, refOf } from "./resolve.js";

interface Cancelled {
  cancelled: { dispatchId: string; dir: string; state: DispatchState; status: string | null };
}

export const cancelCommand: Command<Cancelled> = {
  name: "cancel",
  usage: `usage: catherd cancel <name|id|dir> [--wait] [--run <r>] [--json]

Asks the supervisor to stop the dispatch (it wakes on the cancel file at once; see specs/supervisor.md,
"When it polls", for a home shared between machines). If the supervisor is gone but the agent still runs
(orphaned), a new supervisor adopts it and acts on the request; an orphan that cannot be adopted (its
supervisor died before naming the agent) is stopped here — each process only if its pid and start time
read back exactly — and recorded cancelled. A chain of attempts (--fallback) is cancelled at its last
attempt, and goes on to no other. --wait returns once the dispatch is recorded.`,
  options: {
    run: { type: "string", description: "the run to look in (default: $CATHERD_RUN, else default)" },
    wait: { type: "boolean", description: "return once the dispatch is recorded" },
  },
  async handler(input) {
    const ref = refOf(input, "cancel");
    // A chain is cancelled at its last attempt: one still running is cancelled as any dispatch (the
    // hand-over of an attempt that ends by itself meanwhile finds its cancel file and stops the chain);
    // one recorded with its hand-over still due is stopped there.
    const dir = lastAttemptDir(dispatchDirOf(input, ref));
    let view = inspectDispatch(dir);
    const place = placeOf(dir);
    if (view.state === "recorded" && handOverPending(dir, view.record) && place !== null) {
      await stopChain(runPathsOfPlace(place), dir);
      view = inspectDispatch(dir);
    }
    // Queued: recorded cancelled under the run's lock, never started — unless a promotion got there first,
    // and then it is cancelled as the live dispatch it has become.
    if (view.state === "queued" && place !== null) {
      view = (await cancelQueued(runPathsOfPlace(place), dir)) ?? inspectDispatch(dir);
    }
    if (isAdoptable(view)) {
      requestCancel(dir);
      view = await adoptIfOrphaned(view);
      if (input.values.wait === true) await awaitRecords([dir], { any: false, timeoutMs: null });
      view = inspectDispatch(dir);
    } else if (view.state === "orphaned") {
      view = await stopOrphan(view, view.spec?.killGraceMs ?? SPEC_DEFAULTS.killGraceMs);
    } else if (view.state === "lost" || view.state === "exited") {
      view = await settleIfDead(view);
    } else if (view.state !== "recorded") {
      requestCancel(dir);
      if (input.values.wait === true) {
        await awaitRecords([dir], { any: false, timeoutMs: null });
      }
      view = inspectDispatch(dir);
    }
    const name = view.admit?.name ?? view.dispatchId;
    const status = view.record?.status ?? null;
    const text =
      view.state === "recorded"
        ? `${name}: recorded ${status ?? "?"} (${view.record?.reason ?? view.exit?.reason ?? "?"})`
        : `${name}: cancel requested (${view.state}); catherd wait ${name} returns once it is recorded`;
    return { data: { cancelled: { dispatchId: view.dispatchId, dir, state: view.state, status } }, text };
  },
};
