import { CatherdError } from "../../domain/errors.js";
import { appendToBrief } from "./brief-append.js";

// `dispatch --lock-hint` (specs/lock.md, "The guide and the brief"): one line added to the end of the
// brief, telling the agent to run its test suites and builds through `catherd lock`. Asked for, never
// added by itself: brief.md is the brief as the orchestrator wrote it, byte for byte, and for `exec` the
// brief is a program's stdin, where a line of advice would be data.

/** The line --lock-hint adds after the brief, a blank line between. */
export const LOCK_HINT =
  "This machine is shared with other agents: run test suites, builds and other heavy commands through " +
  "`catherd lock -- <command>` (for example `catherd lock -- npm test`), which waits for a free slot, " +
  "then runs the command as it is and exits with its status.";

/** The brief with the hint appended when asked; E_INPUT_INVALID for `exec` or a dispatch without a brief. */
export function withLockHint(
  brief: Buffer | null,
  asked: boolean,
  backend: string | undefined,
): Buffer | null {
  if (!asked) return brief;
  if (backend === "exec") {
    throw new CatherdError(
      "E_INPUT_INVALID",
      "--lock-hint adds a line for an agent to read; exec runs a command",
      {
        fix: "leave out --lock-hint, or run the command itself as: catherd lock -- <command>",
      },
    );
  }
  if (brief === null) return null; // refused as a missing brief by validation, which names it
  return appendToBrief(brief, `${LOCK_HINT}\n`);
}
