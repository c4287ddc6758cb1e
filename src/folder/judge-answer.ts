import * as fs from "node:fs";
import { backendFor } from "../backends/backend-registry.js";
import { resumeProblem } from "../backends/resume.js";
import {
  answerInvalidMessage,
  answerOverLimitMessage,
  keptAnswerErrors,
  readAnswer,
  unreadableErrors,
} from "../domain/ending/answer-contract.js";
import type { AnswerProblem } from "../domain/ending/ending.js";
import type { StreamSummary } from "../domain/ending/summary.js";
import type { AdmitFile, AnswerError, SpecFile } from "../domain/schemas.js";
import type { BackendId, Status } from "../domain/vocab.js";
import { writeFileAtomic } from "../infra/atomic.js";
import { MAX_LINE_BYTES } from "../infra/line-reader.js";
import { FILES, fileIn } from "./layout.js";

// The record writer's check of a dispatch's answer (specs/record.md, "The answer"): whatever the CLI
// promised, catherd reads the final answer itself and validates it against the folder's
// answer-schema.json. Valid: record `answer` and answer.json. Invalid: `answer: null`, `answerErrors`,
// and the problem that the verdict (src/domain/ending/ending.ts) makes status `failed` with kind `answer-invalid`
// — and, while repairs are left and a thread is known, the chain's next step repairs it on the same thread
// (src/domain/admission/ladder.ts). An answer over catherd's limits (size, depth, a dropped line) is kind
// `answer-over-limit`: the record says which limit, and no repair.

/** The record's answer fields and what they make of the verdict. */
export interface AnswerCheck {
  /** `answer` and `answerErrors` for the record; null without an answer schema (the fields are absent). */
  fields: { answer: unknown; answerErrors: AnswerError[] | null } | null;
  /** Why the answer does not hold, for the verdict (src/domain/ending/ending.ts); null: it holds, or none was judged. */
  problem: AnswerProblem | null;
}

/** What the check needs of the ending: its status before the answer, its final message, its thread. */
export interface AnswerEnding {
  status: Status;
  reply: string | null;
  backend: BackendId;
  thread: string | null;
}

/**
 * The answer of a dispatch with an answer schema (spec.json `answerSchema`), read and validated; nothing
 * for one without. Only an `ok` ending has an answer to judge: any other keeps its verdict, with `answer`
 * and `answerErrors` null. A valid answer is written to answer.json.
 */
export async function checkAnswer(
  dir: string,
  files: { spec: SpecFile | null; admit: AdmitFile | null },
  summary: StreamSummary,
  ended: AnswerEnding,
): Promise<AnswerCheck> {
  if (files.spec?.answerSchema == null) return { fields: null, problem: null };
  if (ended.status !== "ok") return { fields: { answer: null, answerErrors: null }, problem: null };
  const dropped = summary.droppedSinceReply > 0 ? MAX_LINE_BYTES : null;
  const read = readAnswer(summary.final?.structured, ended.reply, dropped);
  if (!read.ok && read.overLimit) {
    const problem = { kind: "answer-over-limit", message: answerOverLimitMessage(read.message) } as const;
    return { fields: { answer: null, answerErrors: unreadableErrors(read.message) }, problem };
  }
  const errors = read.ok ? await errorsAgainstSchema(dir, read.value) : unreadableErrors(read.message);
  if (errors.length === 0 && read.ok) {
    writeFileAtomic(fileIn(dir, FILES.answer), `${JSON.stringify(read.value, null, 2)}\n`);
    return { fields: { answer: read.value, answerErrors: null }, problem: null };
  }
  const kept = keptAnswerErrors(errors);
  const message = answerInvalidMessage(kept, whatFollows(files.admit, ended));
  return { fields: { answer: null, answerErrors: kept }, problem: { kind: "answer-invalid", message } };
}

/** What follows an answer that does not fit: a repair on the same thread, none left, or none possible. */
function whatFollows(admit: AdmitFile | null, ended: AnswerEnding) {
  const repairs = admit?.ladder?.repairs ?? 0;
  if (repairs === 0) return "no-repairs" as const;
  const unresumable = resumeProblem(backendFor(ended.backend), ended.thread);
  return unresumable === null ? ("repair" as const) : { unresumable };
}

/** The validator's errors of `value` against the folder's answer-schema.json ([] when it fits). */
async function errorsAgainstSchema(dir: string, value: unknown): Promise<AnswerError[]> {
  let schema: unknown;
  try {
    schema = JSON.parse(fs.readFileSync(fileIn(dir, FILES.answerSchema), "utf8"));
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return [{ path: "", message: `${FILES.answerSchema} cannot be read: ${why}` }];
  }
  // Loaded only for a dispatch with a schema: every other record is written without the validator.
  const { compileAnswerSchema } = await import("../infra/answer-validator.js");
  const compiled = await compileAnswerSchema(schema);
  if (!compiled.ok)
    return [{ path: "", message: `${FILES.answerSchema} is not a valid schema: ${compiled.problem}` }];
  return compiled.validator.validate(value);
}
