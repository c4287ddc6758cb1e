import type { Backend } from "../../backends/types.js";
import { CatherdError } from "../../domain/errors.js";
import type { SteerSettings } from "../../domain/schemas.js";
import type { OnQuestion } from "../../domain/steering/questions.js";
import { compactDuration, parseDuration } from "../../domain/text/duration.js";
import { programFile } from "../../infra/programs.js";
import type { Concern } from "./concern.js";

// `dispatch --steerable`, `--keep-open DURATION` and `--on-question allow|deny|wait DURATION`
// (specs/steering.md): whether catherd can talk to the agent while it runs, how long an ended turn waits
// for a message, and what answers what the agent asks when nobody does.

export interface RawSteerInput {
  steerable?: boolean | undefined;
  keepOpen?: string | undefined;
  /** `allow`, `deny`, or `wait` followed by a duration (`wait 10m`, `wait:10m`). */
  onQuestion?: string | undefined;
}

/** The longest --keep-open: a day (a dispatch open longer is a service, not a dispatch). */
export const MAX_KEEP_OPEN_MS = 24 * 3600_000;

/** The steer settings spec.json gets, or null for a dispatch that is not steerable. */
export function parseSteer(raw: RawSteerInput, backend: Backend): SteerSettings | null {
  const keepOpenMs =
    raw.keepOpen === undefined ? null : parseDuration("--keep-open", raw.keepOpen, MAX_KEEP_OPEN_MS);
  const onQuestion = raw.onQuestion === undefined ? null : parseOnQuestion(raw.onQuestion);
  // --keep-open and --on-question make no sense without the channel: they imply it.
  const steerable = raw.steerable === true || keepOpenMs !== null || onQuestion !== null;
  if (!steerable) return null;
  if (backend.steer === undefined) throw notSteerable(backend, flagOf(raw));
  return { keepOpenMs, onQuestion };
}

function flagOf(raw: RawSteerInput): string {
  if (raw.steerable === true) return "--steerable";
  return raw.keepOpen !== undefined ? "--keep-open" : "--on-question";
}

/** E_INPUT_INVALID for a steer flag on a backend catherd cannot talk to while it runs. */
export function notSteerable(backend: Backend, flag: string): CatherdError {
  return new CatherdError(
    "E_INPUT_INVALID",
    `${flag}: catherd cannot talk to a running ${backend.id} agent (${steerSupport(backend.id)})`,
    {
      fix: `leave out ${flag}, or dispatch to claude-code; follow an ended dispatch up with --follow-up NAME`,
    },
  );
}

/** What a backend supports, in a refusal's words (specs/steering.md, "Which backends"). */
export function steerSupport(backend: string): string {
  switch (backend) {
    case "claude-code":
      return "it takes messages mid-turn over its stream-json input";
    case "codex":
      return "it takes messages mid-turn over its app-server (`codex app-server`)";
    case "gemini":
      return "it takes messages between turns over ACP (`gemini --acp`)";
    case "opencode":
      return "it takes messages mid-turn over its server (`opencode serve`, through catherd's bridge)";
    case "exec":
      return "exec runs a command, which has no conversation to join";
    default:
      return `${backend} has no session protocol catherd drives`;
  }
}

export function parseOnQuestion(text: string): OnQuestion {
  const fix = "give --on-question allow, deny, or wait DURATION (e.g. wait 10m: then deny)";
  const words = text.trim().split(/[\s:=]+/);
  const policy = words[0];
  if ((policy === "allow" || policy === "deny") && words.length === 1) return { policy, waitMs: 0 };
  if (policy === "wait" && words.length === 2) {
    return { policy, waitMs: parseDuration("--on-question wait", words[1] ?? "", MAX_KEEP_OPEN_MS) };
  }
  throw new CatherdError(
    "E_INPUT_INVALID",
    `--on-question ${JSON.stringify(text.slice(0, 80))} is not a policy`,
    {
      fix,
    },
  );
}

/** The steering concern: its flags, and its part of the request (absent: not steerable). */
export const steering = {
  options: {
    steerable: {
      type: "boolean",
      description:
        "start the agent so that catherd can talk to it while it runs: catherd send, catherd answer (claude-code, codex, opencode; specs/steering.md)",
    },
    "keep-open": {
      type: "string",
      value: "<duration>",
      description: `steerable: an ended turn waits this long for another message before the dispatch ends (neither idle nor wall time; at most ${compactDuration(MAX_KEEP_OPEN_MS)})`,
    },
    "on-question": {
      type: "string",
      value: "<policy>",
      description: `steerable: the agent's permission asks and questions come to catherd (questions/, catherd answer); allow or deny answers them at once, \`wait 10m\` gives a person that long (at most ${compactDuration(MAX_KEEP_OPEN_MS)}), then denies`,
    },
  },
  validate(raw, { backend }) {
    const steer = parseSteer(raw, backend);
    return steer === null ? {} : { steer };
  },
  toSpec: ({ steer }) => (steer == null ? {} : { steer }),
  toPlan: ({ steer }) => ({
    steer:
      steer == null
        ? null
        : {
            questions: steer.onQuestion !== null,
            bridge: { node: process.execPath, program: programFile("opencode-bridge", import.meta.url) },
          },
  }),
  // Steerable on, with its policy for questions, where the successor's CLI can be talked to
  // (specs/steering.md, "Exactly once").
  carry: ({ spec }, to) =>
    spec?.steer === undefined || to.backend.steer === undefined ? {} : { steer: spec.steer },
} satisfies Concern<RawSteerInput, { steer?: SteerSettings | null }>;
