import type { Backend } from "../../backends/types.js";
import type { OptionSpec } from "../../domain/option-def.js";
import type { LadderFile, SpecFile } from "../../domain/schemas.js";

// A concern of a dispatch request (specs/dispatch.md, "A request's concerns"): one module owns its flags
// (the command line's parser and help, and the MCP tool's schema, are generated from them), its checks,
// its fields of spec.json and of admit.json's ladder, and what a chain's next attempt takes over of it.
// The dispatch request is the composition of the concerns' parts (dispatch-request.ts), so that a flag
// added to a concern touches that module, its test and the specs, and nothing else.

/**
 * The flags of a dispatch as given, each under its argumentName (`keep-tmp` → `keepTmp`): a string, a
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
}

/** What a chain's next attempt is made from: the recorded attempt's spec.json and admit.json's ladder. */
export interface Recorded {
  spec: SpecFile | null;
  ladder: LadderFile;
}

/** A request's field of admit.json's ladder: what a chain's next attempt repeats of this request. */
export type LadderRequest = LadderFile["request"];

/**
 * One concern: `Raw` its flags as given, `Part` its fields of the request (a slice of DispatchRequest).
 * `validate` checks before anything is written and throws the CatherdError that refuses a flag;
 * `toSpec` and `toLadder` give its fields of spec.json and of admit.json's ladder; `carry` its part of
 * a chain's next attempt, from the recorded attempt. A follow-up turn is validated from its own flags
 * (dispatch/follow-up/), with what it takes from its turn given as flags.
 */
export interface Concern<Raw, Part> {
  /** Its flags, in the order `--help` lists them. */
  options: OptionSpec;
  validate(raw: Raw, context: ConcernContext): Part;
  toSpec?(part: Part): Partial<SpecFile>;
  toLadder?(part: Part): Partial<LadderRequest>;
  carry?(recorded: Recorded): Part;
}
