import { CatherdError } from "../../domain/errors.js";
import { appendToBrief } from "./brief-append.js";

// `dispatch --outcome` (specs/dispatch.md, "A declared outcome"): a short, fixed contract added to the end
// of the brief, telling the worker to end its final message with its outcome line, which the record
// writer reads into record.json's `outcome` (domain/ending/declared-outcome.ts). Asked for, never added by
// itself: brief.md is the brief as the orchestrator wrote it, byte for byte, and for `exec` the brief is
// a program's stdin, where a contract would be data.

/** The contract --outcome adds after the brief (and after --lock-hint's line), a blank line between. */
export const OUTCOME_CONTRACT =
  "When you are done, end your final message with one line of its own, exactly in this form:\n" +
  "STATUS: <complete|partial|blocked|refused> — <why, in one short sentence>\n" +
  "complete: all that was asked is done; partial: some of it is done; blocked: you could not go on (say " +
  "what you need); refused: you would not do it (say why).";

/** The brief with the contract appended when asked; E_INPUT_INVALID for `exec`. */
export function withOutcomeContract(
  brief: Buffer | null,
  asked: boolean,
  backend: string | undefined,
): Buffer | null {
  if (!asked) return brief;
  if (backend === "exec") {
    throw new CatherdError(
      "E_INPUT_INVALID",
      "--outcome asks an agent to end with an outcome line; exec runs a command, which reads no contract",
      { fix: "leave out --outcome for exec: its exit code is its outcome" },
    );
  }
  if (brief === null) return null; // refused as a missing brief by validation, which names it
  return appendToBrief(brief, `${OUTCOME_CONTRACT}\n`);
}
