import { runName } from "../infra/paths.js";
import { validateFollowUp } from "./follow-up/follow-up-request.js";
import { readAnswer } from "./request/answer-input.js";
import { flagValues, type ParsedFlags } from "./request/dispatch-options.js";
import { type DispatchRequest, type RawDispatchInput, validateDispatch } from "./request/dispatch-request.js";
import { newRaceId, type RacePlan, racePlan } from "./request/race-request.js";

// The request `catherd dispatch` and the MCP dispatch tool stand for, from the flags their parser gave
// (request/dispatch-options.ts): the answer schema read, the brief read, then every concern validated —
// as a new dispatch, or with --follow-up as the next turn of a recorded one.

/** What the command gives beside its flags: its brief (it owns stdin), the arguments after `--`. */
export interface GivenBeside {
  /** Reads the brief from --brief, --brief-file or stdin; called once the answer schema is checked. */
  readBrief(): Promise<Buffer | null>;
  rest: readonly string[];
  environment: NodeJS.ProcessEnv;
}

/** The validated request of these flags; throws the CatherdError that refuses them, nothing written. */
export async function requestFromFlags(parsed: ParsedFlags, given: GivenBeside): Promise<DispatchRequest> {
  return (await dispatchFromFlags(parsed, given)).request;
}

/**
 * The validated request of these flags and, when they ask for a race (`--attempts`, `--also`), its
 * attempts' requests (request/race-request.ts); throws the CatherdError that refuses them.
 */
export async function dispatchFromFlags(
  parsed: ParsedFlags,
  given: GivenBeside,
): Promise<{ request: DispatchRequest; race: RacePlan | null }> {
  const flags = flagValues(parsed);
  const answer = await readAnswer(flags);
  const run = runName(typeof flags.run === "string" ? flags.run : undefined, given.environment);
  const raw = {
    ...flags,
    run,
    brief: await given.readBrief(),
    answer,
    rest: given.rest,
    environment: given.environment,
  } as RawDispatchInput;
  const followUp = flags.followUp;
  const request = typeof followUp === "string" ? validateFollowUp(raw, followUp) : validateDispatch(raw);
  const asked = request.raceAsked;
  if (asked == null) return { request, race: null };
  return { request, race: racePlan(raw, { ...request, raceAsked: asked }, newRaceId(new Date())) };
}
