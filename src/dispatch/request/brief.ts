import type { Backend } from "../../backends/types.js";
import { CatherdError } from "../../domain/errors.js";
import { type AnswerRequest, withAnswerContract } from "./answer-input.js";
import type { Concern, Recorded } from "./concern.js";
import { withLockHint } from "./lock-hint.js";
import { withOutcomeContract } from "./outcome-contract.js";
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
  toSpec: ({ brief, outcome }) => ({
    ...(outcome === true ? { outcome: true } : {}),
    ...(brief === null ? {} : { briefBytes: brief.length }),
  }),
  toLadder: ({ lockHint }) => ({ lockHint: lockHint === true }),
  // A chain's next attempt is composed again for its own CLI, from the brief as given and what was asked;
  // a repair's brief is the hand-over's own, given nothing more; a follow-up takes its own brief and flags.
  carry(recorded, to) {
    if (to.kind === "follow-up") return {};
    const outcome = recorded.spec?.outcome === true ? { outcome: true } : {};
    if (to.repair === true) return outcome;
    const hinted = recorded.ladder?.request.lockHint === true ? { lockHint: true } : {};
    return { brief: briefAsGiven(recorded), ...hinted, ...outcome };
  },
} satisfies Concern<RawBriefInput, BriefRequest>;

/**
 * The brief the agent reads (brief.md), composed once, at staging, for the CLI that runs it: the brief as
 * given, byte for byte, then what was asked, each after a blank line — --lock-hint's line, --outcome's
 * contract, and the answer contract for a CLI without a schema flag of its own (brief-append.ts).
 * spec.json's `briefBytes` says how much of it is the brief as given.
 */
export function composeBrief(parts: BriefParts): Buffer | null {
  const { backend } = parts;
  const hinted = withLockHint(parts.brief, parts.lockHint === true, backend.id);
  const contracted = withOutcomeContract(hinted, parts.outcome === true, backend.id);
  return withAnswerContract(contracted, backend, parts.answer ?? null);
}

/**
 * The brief as given, from a recorded folder: brief.md's first `briefBytes` bytes (spec.json). A folder
 * written before `briefBytes` gives all of brief.md: what its attempt appended is then in the brief as
 * given (specs/dispatch-folder.md). E_FILE_CORRUPT when brief.md is shorter than `briefBytes` says.
 */
export function briefAsGiven({ spec, brief }: Recorded): Buffer | null {
  if (brief == null) return null;
  const given = spec?.briefBytes;
  if (given === undefined) return brief;
  if (given <= brief.length) return brief.subarray(0, given);
  throw new CatherdError(
    "E_FILE_CORRUPT",
    `brief.md is ${brief.length} bytes, fewer than the ${given} that spec.json's briefBytes says are the brief as given`,
    { fix: "dispatch the brief anew: this chain cannot be continued from its folder" },
  );
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
