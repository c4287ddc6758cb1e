import { type CancelledSummary, cancelDispatch, cancelledSummary } from "../dispatch/cancel.js";
import { cancelRace, lookAtRace } from "../dispatch/race.js";
import { statusWords } from "../domain/ending/record-words.js";
import type { RaceRead } from "../folder/race.js";
import { type Command, type ParsedInput, RUN_OPTION } from "./command-io.js";
import { type RaceData, raceData, raceText } from "./race-text.js";
import { dispatchDirOf, raceOf, refOf, runPathsOf } from "./resolve.js";

interface Cancelled {
  cancelled: CancelledSummary;
  /** `cancel NAME` of a race: every attempt cancelled; `cancelled` is then its first attempt's. */
  race?: RaceData;
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
    const ref = refOf(input, "cancel");
    const race = raceOf(input, ref);
    if (race !== null) return cancelRaceAnswer(input, race);
    const dir = dispatchDirOf(input, ref);
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

/** `cancel NAME` of a race: every attempt (its chain too) cancelled as a dispatch is; with --wait, recorded. */
async function cancelRaceAnswer(
  input: ParsedInput,
  read: RaceRead,
): Promise<{ data: Cancelled; text: string }> {
  const run = runPathsOf(input);
  await cancelRace(run, read, { wait: input.values.wait === true });
  const settled = await lookAtRace(run, read);
  const race = raceData(read, settled);
  const first = race.attempts[0];
  const data: Cancelled = {
    cancelled: {
      name: first?.name ?? null,
      dispatchId: first?.dispatchId ?? "",
      dir: first?.dir ?? "",
      state: first?.ended === true ? "recorded" : "stopping",
      status: first?.status ?? null,
    },
    race,
  };
  const going = race.attempts.filter((a) => !a.ended).length;
  const tail =
    going === 0 ? "" : `${going} still stopping; catherd wait ${read.race.name} returns once it is decided\n`;
  return { data, text: `cancelled every attempt of race ${read.race.name}\n${raceText(race)}${tail}` };
}
