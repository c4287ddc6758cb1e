import type { Backend } from "../../backends/types.js";
import type { Concern } from "./concern.js";
import { withLockHint } from "./lock-hint.js";
import { withOutcomeContract } from "./outcome-contract.js";
import { invalid } from "./text.js";

// The brief (specs/dispatch.md §1): --brief, --brief-file or stdin (read by the command, which owns
// stdin: src/cli/brief-input.ts), and what catherd adds to it when asked — --lock-hint's line and
// --outcome's contract — appended once the backend is known (a follow-up's is its turn's).

/** The largest brief accepted: larger ones belong in a file in the work tree that the brief names. */
export const MAX_BRIEF_BYTES = 4 * 1024 * 1024;

export interface RawBriefInput {
  /** The brief's bytes as read, or null when none was given. */
  brief: Buffer | null;
  lockHint?: boolean | undefined;
  outcome?: boolean | undefined;
}

export interface BriefRequest {
  /** The brief, with what was asked appended; null for exec without one. */
  brief: Buffer | null;
  /** `--outcome`: the brief carries the outcome contract, and the record reads the outcome line. */
  outcome?: boolean;
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
    const given = validateBrief(raw.brief, backend);
    const asked = withOutcomeContract(
      withLockHint(given, raw.lockHint === true, backend.id),
      raw.outcome === true,
      backend.id,
    );
    return { brief: asked, ...(raw.outcome === true ? { outcome: true } : {}) };
  },
  toSpec: ({ outcome }) => (outcome === true ? { outcome: true } : {}),
} satisfies Concern<RawBriefInput, BriefRequest>;

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
