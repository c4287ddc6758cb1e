import {
  type CheckSpec,
  DEFAULT_CHECK_REPAIRS,
  DEFAULT_CHECK_TIMEOUT_MS,
  MAX_CHECK_COMMAND_CHARS,
  MAX_CHECK_REPAIRS,
} from "../../domain/check/check.js";
import { compactDuration, parseDuration } from "../../domain/text/duration.js";
import type { Concern, Recorded, Successor } from "./concern.js";
import { invalid, shownValue } from "./text.js";

// `dispatch --verify CMD` (`--verify-timeout`, `--verify-repairs`; the MCP tool: `verify`, `verifyTimeout`,
// `verifyRepairs`): the check that judges the agent's turn (specs/dispatch.md, "Checks and races"). spec.json
// names it (`verify`); the chain's repair turns left are its ladder's (`checkRepairs`). A follow-up keeps its
// conversation's check unless given another; a chain's next attempt keeps its own.

export interface RawCheckInput {
  verify?: string | undefined;
  verifyTimeout?: string | undefined;
  verifyRepairs?: string | undefined;
}

export interface CheckRequest {
  /** The check, or null without --verify (spec.json's field of the same name). */
  verify: CheckSpec | null;
}

/** The longest time limit of a check: a day. */
const MAX_CHECK_TIMEOUT_MS = 24 * 3_600_000;

export const checking = {
  options: {
    verify: {
      type: "string",
      value: "<cmd>",
      description:
        "a shell command that judges the agent's turn (npm test): run in its folder through a heavy slot after an ok turn; exit 0 passes, else repair turns on the same thread, then failed, kind verify",
    },
    "verify-timeout": {
      type: "string",
      value: "<d>",
      description: "with --verify: the check's time limit (at most 24h); past it the check is stopped",
      default: compactDuration(DEFAULT_CHECK_TIMEOUT_MS),
    },
    "verify-repairs": {
      type: "string",
      value: "<n>",
      integer: true,
      description: `with --verify: repair turns for a red check (0: none; at most ${MAX_CHECK_REPAIRS})`,
      default: String(DEFAULT_CHECK_REPAIRS),
    },
  },
  anew: ["verify"],
  validate(raw, { backend }) {
    if (raw.verify === undefined) {
      refuseWithoutCheck(raw);
      return { verify: null };
    }
    const command = commandOf(raw.verify);
    const timeoutMs =
      raw.verifyTimeout === undefined
        ? DEFAULT_CHECK_TIMEOUT_MS
        : parseDuration("--verify-timeout", raw.verifyTimeout, MAX_CHECK_TIMEOUT_MS);
    // exec has no thread to repair on: its check runs once and judges.
    const repairs = raw.verifyRepairs === undefined ? DEFAULT_CHECK_REPAIRS : repairsOf(raw.verifyRepairs);
    if (backend.id === "exec" && raw.verifyRepairs !== undefined && repairs > 0) {
      throw invalid(
        "--verify-repairs",
        "needs an agent's thread; exec runs a command",
        "leave it out for exec",
      );
    }
    return { verify: { command, timeoutMs, repairs: backend.id === "exec" ? 0 : repairs } };
  },
  toSpec: ({ verify }) => (verify === null ? {} : { verify }),
  carry: (recorded, to) => ({ verify: carriedCheck(recorded, to) }),
} satisfies Concern<RawCheckInput, CheckRequest>;

function refuseWithoutCheck(raw: RawCheckInput): void {
  for (const [flag, value] of [
    ["--verify-timeout", raw.verifyTimeout],
    ["--verify-repairs", raw.verifyRepairs],
  ] as const) {
    if (value !== undefined) throw invalid(flag, "needs --verify", 'give --verify "<cmd>", or leave it out');
  }
}

function commandOf(text: string): string {
  const fix = 'give the check as one shell command line: --verify "npm test"';
  if (text.trim() === "") throw invalid("--verify", "is empty", fix);
  if (text.length > MAX_CHECK_COMMAND_CHARS)
    throw invalid("--verify", `is ${text.length} characters, over ${MAX_CHECK_COMMAND_CHARS}`, fix);
  if (text.includes("\0")) throw invalid("--verify", "holds a NUL character", fix);
  return text;
}

function repairsOf(text: string): number {
  if (!/^[0-9]{1,2}$/.test(text) || Number(text) > MAX_CHECK_REPAIRS) {
    throw invalid(
      "--verify-repairs",
      `${shownValue(text)} is not a whole number from 0 to ${MAX_CHECK_REPAIRS}`,
      `give 0 (no repair turn) to ${MAX_CHECK_REPAIRS}; the default is ${DEFAULT_CHECK_REPAIRS}`,
    );
  }
  return Number(text);
}

/**
 * The check a successor keeps: a chain's next attempt its own, with the repairs its ladder has left; a
 * follow-up its conversation's, with the repairs the conversation asked for.
 */
function carriedCheck({ spec, ladder }: Recorded, to: Successor): CheckSpec | null {
  const check = spec?.verify;
  if (check === undefined) return null;
  return to.kind === "follow-up" ? { ...check } : { ...check, repairs: ladder?.checkRepairs ?? 0 };
}
