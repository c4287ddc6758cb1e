import { argumentName, type OptionSpec } from "../../domain/option-def.js";
import { accountChoice } from "./account-input.js";
import { AGENT_FROM_TURN, AGENT_OPTIONS } from "./agent.js";
import { answer } from "./answer-input.js";
import { brief } from "./brief.js";
import { spendCaps } from "./caps-input.js";
import { chain } from "./chain.js";
import type { FixedByTurn, FlagValues } from "./concern.js";
import { isolation } from "./isolation-input.js";
import { limits } from "./limits.js";
import { notify } from "./notify.js";
import { placement } from "./placement.js";
import { racing } from "./race-input.js";
import { runCaps } from "./run-caps.js";
import { sandbox } from "./sandbox-input.js";
import { steering } from "./steer-input.js";
import { tagging } from "./tag-input.js";
import { checking } from "./verify-input.js";

// The flags of `catherd dispatch` and of the MCP dispatch tool: the concerns' own, in the order `--help`
// lists them. The command line's parser, its help and the tool's input schema are made from this table,
// and flagValues turns what they parsed into the flags the concerns read: no flag is named between.

/** Each concern's flags, by the concern, in the order `--help` lists them. */
export const CONCERN_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  agent: AGENT_OPTIONS,
  brief: brief.options,
  limits: limits.options,
  "run-caps": runCaps.options,
  chain: chain.options,
  "spend-caps": spendCaps.options,
  isolation: isolation.options,
  placement: placement.options,
  account: accountChoice.options,
  tag: tagging.options,
  sandbox: sandbox.options,
  notify: notify.options,
  steering: steering.options,
  answer: answer.options,
  check: checking.options,
  race: racing.options,
};

/** Every flag of a dispatch, each declared by the concern that validates it. */
export const DISPATCH_OPTIONS: OptionSpec = Object.assign({}, ...Object.values(CONCERN_OPTIONS));

/**
 * The flags a follow-up takes from its turn, refused with --follow-up, in the order a refusal names the
 * first: each declared by its concern (`fromTurn`).
 */
export const FROM_THE_TURN: Readonly<Record<string, FixedByTurn>> = {
  ...AGENT_FROM_TURN,
  ...isolation.fromTurn,
  ...chain.fromTurn,
};

/** What a parser gave for each flag it saw, by the flag's name (`max-parallel`). */
export type ParsedFlags = Readonly<Record<string, string | boolean | readonly string[] | undefined>>;

/**
 * The flags as the concerns read them: each under its argumentName, a boolean flag false and a
 * repeatable one an empty list when not given, a repeatable one given once a list of one. A value no
 * option declares (the MCP tool's inline schema) passes under its argumentName too.
 */
export function flagValues(parsed: ParsedFlags): FlagValues {
  const flags: Record<string, string | boolean | readonly string[] | undefined> = {};
  for (const [flag, value] of Object.entries(parsed)) flags[argumentName(flag)] = value;
  for (const [flag, def] of Object.entries(DISPATCH_OPTIONS)) {
    const value = parsed[flag];
    const key = argumentName(flag);
    if (def.type === "boolean") flags[key] = value === true;
    else if (def.multiple === true)
      flags[key] = Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
    else flags[key] = typeof value === "string" ? value : undefined;
  }
  return flags;
}
