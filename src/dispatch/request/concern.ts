import type { Backend, PlanRequest } from "../../backends/types.js";
import { argumentName, type OptionSpec } from "../../domain/option-def.js";
import type { AdmitFile, LadderFile, RecordFile, SpecFile } from "../../domain/schemas.js";

// A concern of a dispatch request (specs/dispatch.md, "A request's concerns"): one module owns its flags
// (the command line's parser and help, and the MCP tool's schema, are generated from them), its checks,
// its fields of spec.json and of admit.json's ladder, and what a chain's next attempt takes over of it.
// The dispatch request is the composition of the concerns' parts (dispatch-request.ts), so that a flag
// added to a concern touches that module, its test and the specs, and nothing else.

/**
 * The flags of a dispatch as given, each under its argumentName (`max-parallel` → `maxParallel`): a string, a
 * boolean (false when not given), a list (empty when not given), or undefined.
 */
export type FlagValues = Readonly<Record<string, string | boolean | readonly string[] | undefined>>;

/** What a concern's checks may read beside its own flags: what the request's core settled first. */
export interface ConcernContext {
  backend: Backend;
  /** --cwd, resolved and checked to be a folder. */
  cwd: string;
  /** The names given to --env. */
  envNames: readonly string[];
  /** The dispatcher's environment (never written down). */
  environment: NodeJS.ProcessEnv;
  /** The run's name (`--run`, else `$CATHERD_RUN`, else the default), as the request's core settled it. */
  run: string;
}

/**
 * What a successor is made from: the recorded dispatch's spec.json, and admit.json's ladder (null for a
 * dispatch that had none: a follow-up's turn may not). The files beside them are read by whoever makes
 * the successor (the hand-over), so that every carry stays a pure function of what is recorded.
 */
export interface Recorded {
  spec: SpecFile | null;
  ladder: LadderFile | null;
  /** Its admit.json, for what a concern wrote there itself (the placement); null where none was read. */
  admit?: AdmitFile | null;
  /** Its brief.md as the folder holds it (the brief as given, then what was appended); null: none. */
  brief?: Buffer | null;
  /** Its answer-schema.json, parsed and as text; null: it asked for no answer. */
  answer?: { schema: unknown; text: string } | null;
  /** Its record.json: what it spent counts against the chain's caps. */
  record?: RecordFile | null;
}

/** Who takes a dispatch over: the next turn of its conversation, or the next attempt of its chain. */
export interface Successor {
  kind: "follow-up" | "next-attempt";
  /** The successor's backend: a chain's next rung may be another CLI. */
  backend: Backend;
  /**
   * A next attempt that repairs an answer: the same thread, told the validator's errors in a brief of the
   * hand-over's own (queue/hand-over.ts), to which nothing of the first brief's is added.
   */
  repair?: boolean;
}

/** What a follow-up's turn fixes that a flag would change. */
export type FixedByTurn = "thread" | "place and CLI";

/** A request's field of admit.json's ladder: what a chain's next attempt repeats of this request. */
export type LadderRequest = LadderFile["request"];

/**
 * One concern: `Raw` its flags as given, `Part` its fields of the request (a slice of DispatchRequest).
 * `validate` checks before anything is written and throws the CatherdError that refuses a flag;
 * `toSpec`, `toAdmit` and `toLadder` give its fields of spec.json, of admit.json and of its ladder,
 * `toPlan` what the backend's plan of the CLI's command line reads of it; `carry` what a
 * follow-up turn or a chain's next attempt takes over of it, from the recorded dispatch. A follow-up is
 * validated from its own flags (dispatch/follow-up/), with what its thread fixes given as flags.
 */
export interface Concern<Raw, Part> {
  /** Its flags, in the order `--help` lists them. */
  options: OptionSpec;
  validate(raw: Raw, context: ConcernContext): Part;
  /**
   * Its flags a follow-up takes from its turn, each with what it fixes ("thread", "place and CLI"):
   * given with --follow-up they are refused, not ignored (dispatch/follow-up/).
   */
  fromTurn?: Readonly<Record<string, FixedByTurn>>;
  toSpec?(part: Part): Partial<SpecFile>;
  toLadder?(part: Part): Partial<LadderRequest>;
  /** Its fields of admit.json (beside the ladder). */
  toAdmit?(part: Part): Partial<AdmitFile>;
  /** What the backend's plan (its CLI's argv and environment) is given of it. */
  toPlan?(part: Part): Partial<PlanRequest>;
  /**
   * What the successor takes over of this part. A follow-up given any of the flags `anew` names (absent:
   * any of its flags) takes its own part instead.
   */
  carry?(recorded: Recorded, to: Successor): Partial<Part>;
  anew?: readonly string[];
}

/** Whether `flag` (`keep-tmp`) was given: a boolean true, a list not empty, a string. */
export function flagGiven(flags: object, flag: string): boolean {
  const value: unknown = (flags as Record<string, unknown>)[argumentName(flag)];
  return !(value === undefined || value === false || (Array.isArray(value) && value.length === 0));
}
