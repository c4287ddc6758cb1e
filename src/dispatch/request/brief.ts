import type { Backend } from "../../backends/types.js";
import { type AnswerRequest, withAnswerContract, withoutAnswerContract } from "./answer-input.js";
import type { Concern } from "./concern.js";
import { withLockHint } from "./lock-hint.js";
import { OUTCOME_CONTRACT, withOutcomeContract } from "./outcome-contract.js";
import { invalid } from "./text.js";

// The brief (specs/dispatch.md §1): --brief, --brief-file or stdin (read by the command, which owns
// stdin: src/cli/brief-input.ts), and what catherd adds to it when asked — --lock-hint's line,
// --outcome's contract, an answer contract — composed once, at staging, for the CLI that runs it (a
// follow-up's is its turn's, a chain's next attempt's its rung's).

/** The largest brief accepted: larger ones belong in a file in the work tree that the brief names. */
export const MAX_BRIEF_BYTES = 4 * 1024 * 1024;

export interface RawBriefInput {
  /** The brief's bytes as read, or null when none was given. */
  brief: Buffer | null;
  lockHint?: boolean | undefined;
  outcome?: boolean | undefined;
}

export interface BriefRequest {
  /** The brief as given (composeBrief appends what was asked at staging); null for exec without one. */
  brief: Buffer | null;
  /** `--lock-hint`: the brief gets the line about `catherd lock`. */
  lockHint?: boolean;
  /** `--outcome`: the brief gets the outcome contract, and the record reads the outcome line. */
  outcome?: boolean;
}

/** What composeBrief reads of a request. */
export interface BriefParts extends BriefRequest {
  backend: Backend;
  answer?: AnswerRequest | null;
}

export const brief = {
  options: {
    brief: { type: "string", value: "<text>", description: "the brief (prompt) as text" },
    "brief-file": {
      type: "string",
      value: "<path|->",
      description: "a file holding the brief; - reads it from stdin",
      toolDescription: "the path of a file holding the brief",
    },
    "lock-hint": {
      type: "boolean",
      description:
        "add one line to the brief telling the agent to run test suites and builds through catherd lock",
    },
    outcome: {
      type: "boolean",
      description:
        "add a short contract to the brief asking the agent to end with `STATUS: complete|partial|blocked|refused — why`, read into the record's outcome",
    },
  },
  validate(raw, { backend }) {
    // The additions are refused for exec before the brief is judged: their refusal is the one to fix.
    withLockHint(null, raw.lockHint === true, backend.id);
    withOutcomeContract(null, raw.outcome === true, backend.id);
    return {
      brief: validateBrief(raw.brief, backend),
      ...(raw.lockHint === true ? { lockHint: true } : {}),
      ...(raw.outcome === true ? { outcome: true } : {}),
    };
  },
  toSpec: ({ outcome }) => (outcome === true ? { outcome: true } : {}),
} satisfies Concern<RawBriefInput, BriefRequest>;

/**
 * The brief the agent reads (brief.md), composed once, at staging, for the CLI that runs it: the brief as
 * given, byte for byte, then what was asked, each after a blank line — --lock-hint's line, --outcome's
 * contract, and the answer contract for a CLI without a schema flag of its own (brief-append.ts).
 */
export function composeBrief(parts: BriefParts): Buffer | null {
  const { backend } = parts;
  const hinted = withLockHint(parts.brief, parts.lockHint === true, backend.id);
  const contracted = withOutcomeContract(hinted, parts.outcome === true, backend.id);
  return withAnswerContract(contracted, backend, parts.answer ?? null);
}

/**
 * The brief a chain's next attempt is composed from: the recorded attempt's brief.md less the contracts
 * composeBrief appended for that attempt's CLI (the outcome contract, the answer contract), which the next
 * attempt's composition appends again for its own. --lock-hint's line, the same for every CLI, stays in it.
 */
export function briefOfChain(
  composed: Buffer | null,
  asked: { outcome: boolean; answer: boolean },
): Buffer | null {
  const unanswered = asked.answer ? withoutAnswerContract(composed) : composed;
  if (unanswered === null || !asked.outcome) return unanswered;
  const suffix = Buffer.from(`\n${OUTCOME_CONTRACT}\n`, "utf8");
  const ends = unanswered.length >= suffix.length && unanswered.subarray(-suffix.length).equals(suffix);
  return ends ? unanswered.subarray(0, unanswered.length - suffix.length) : unanswered;
}

/**
 * The refusal of a brief over MAX_BRIEF_BYTES, from any source (`what`: "brief", "--brief-file x", "the
 * brief on stdin"), with its size when it is known; a stream is drained only a bounded way past the limit
 * (infra/capped-read.ts), so its size is not.
 */
export function briefTooLong(what: string, size: number | null) {
  const limit = `the ${MAX_BRIEF_BYTES}-byte (4 MiB) limit of a brief`;
  return invalid(
    what,
    size === null ? `is over ${limit}` : `is ${size} bytes, over ${limit}`,
    "put long material in a file in the work tree and name it in the brief",
  );
}

/**
 * The brief as given: required for an agent CLI, optional for exec; given, it is non-empty and not only
 * white space (an empty `--brief ""` is refused as `"   "` is: one rule, for every backend, whatever
 * catherd would add to it), UTF-8 without NUL, at most MAX_BRIEF_BYTES.
 */
function validateBrief(given: Buffer | null, backend: Backend): Buffer | null {
  const fix = "give --brief <text>, --brief-file <path>, or the brief on stdin";
  if (given === null) {
    if (backend.needsBrief) throw invalid("brief", "is required", fix);
    return null;
  }
  if (given.length === 0) throw invalid("brief", "is empty", fix);
  if (given.length > MAX_BRIEF_BYTES) throw briefTooLong("brief", given.length);
  if (given.includes(0) || !isUtf8(given)) {
    throw invalid("brief", "is not UTF-8 text (binary data or NUL bytes)", "give the brief as UTF-8 text");
  }
  if (given.toString("utf8").trim() === "") throw invalid("brief", "is only white space", fix);
  return given;
}

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}
