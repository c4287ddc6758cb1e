import { type CancelledSummary, cancelDispatch, cancelledSummary } from "../dispatch/cancel.js";
import { statusWords } from "../domain/ending/record-words.js";
import { type Command, RUN_OPTION } from "./command-io.js";
import { dispatchDirOf, refOf } from "./resolve.js";

interface Cancelled {
  cancelled: CancelledSummary;
}

export const cancelCommand: Command<Cancelled> = {
  name: "cancel",
  synopsis: "<name|id|dir>",
  positionals: 1,
  summary:
    "Asks the supervisor to stop the dispatch (it wakes on the cancel file at once; see specs/supervisor.md, " +
    '"When it polls", for a home shared between machines). If the supervisor is gone but the agent still ' +
    "runs (orphaned), a new supervisor adopts it and acts on the request; an orphan that cannot be adopted " +
    "(its supervisor died before naming the agent) is stopped here — each process only if its pid and start " +
    "time read back exactly — and recorded cancelled. A queued dispatch is recorded cancelled without ever " +
    "starting. A chain of attempts (--fallback) is cancelled at its last attempt, and goes on to no other.",
  json: "{cancelled: {name, dispatchId, dir, state, status}}",
  options: {
    run: RUN_OPTION,
    wait: { type: "boolean", description: "return once the dispatch is recorded" },
  },
  async handler(input) {
    const dir = dispatchDirOf(input, refOf(input, "cancel"));
    const view = await cancelDispatch(dir, { wait: input.values.wait === true });
    const name = view.admit?.name ?? view.dispatchId;
    const status = view.record?.status ?? null;
    const text =
      view.state === "recorded"
        ? `${name}: recorded ${statusWords(status ?? "?", view.record?.reason ?? view.exit?.reason ?? null)}`
        : `${name}: cancel requested (${view.state}); catherd wait ${name} returns once it is recorded`;
    return {
      data: { cancelled: cancelledSummary(view) },
      text,
    };
  },
};
