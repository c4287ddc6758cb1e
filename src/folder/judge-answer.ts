import * as fs from "node:fs";
import { backendFor } from "../backends/registry.js";
import { resumeProblem } from "../backends/resume.js";
import {
  answerInvalidMessage,
  answerOverLimitMessage,
  keptAnswerErrors,
  readAnswer,
  unreadableErrors,
} from "../domain/answer-contract.js";
import type { AdmitFile, AnswerError, RecordFile, SpecFile } from "../domain/schemas.js";
import type { StreamSummary } from "../domain/summary.js";
import { writeFileAtomic } from "../infra/atomic.js";
import { MAX_LINE_BYTES } from "../infra/line-reader.js";
import { FILES, fileIn } from "./layout.js";

// The record writer's check of a dispatch's answer (specs/record.md, "The answer"): whatever the CLI
// promised, catherd reads the final answer itself and validates it against the folder's
// answer-schema.json. Valid: record `answer` and answer.json. Invalid: `answer: null`, `answerErrors`,
// status `failed` with kind `answer-invalid` — and, while repairs are left and a thread is known, the
// chain's next step repairs it on the same thread (src/domain/ladder.ts). An answer over catherd's limits
// (size, depth, a dropped line) is kind `answer-over-limit`: the record says which limit, and no repair.

/**
 * The record with its answer judged, for a dispatch with an answer schema (spec.json `answerSchema`);
 * the record as it is without one. Only an `ok` ending has an answer to judge: any other keeps its
 * verdict, with `answer` and `answerErrors` null.
 */
export async function judgeAnswer(
  dir: string,
  spec: SpecFile | null,
  admit: AdmitFile | null,
  summary: StreamSummary,
  ended: RecordFile,
): Promise<RecordFile> {
  if (spec?.answerSchema == null) return ended;
  if (ended.status !== "ok") return { ...ended, answer: null, answerErrors: null };
  const dropped = summary.droppedSinceReply > 0 ? MAX_LINE_BYTES : null;
  const read = readAnswer(summary.final?.structured, ended.reply, dropped);
  if (!read.ok && read.overLimit) return overLimitRecord(ended, read.message);
  const errors = read.ok ? await errorsAgainstSchema(dir, read.value) : unreadableErrors(read.message);
  if (errors.length === 0 && read.ok) {
    writeFileAtomic(fileIn(dir, FILES.answer), `${JSON.stringify(read.value, null, 2)}\n`);
    return { ...ended, answer: read.value, answerErrors: null };
  }
  const kept = keptAnswerErrors(errors);
  const repairs = admit?.ladder?.repairs ?? 0;
  const unresumable = resumeProblem(backendFor(ended.backend), ended.thread);
  const then = repairs === 0 ? "no-repairs" : unresumable === null ? "repair" : { unresumable };
  return {
    ...ended,
    status: "failed",
    answer: null,
    answerErrors: kept,
    error: {
      code: ended.reason,
      kind: "answer-invalid",
      message: answerInvalidMessage(kept, then),
      retryAfter: null,
      tail: [],
    },
  };
}

/** The record of an answer over catherd's limits: failed, the limit named, no repair (the kind has none). */
function overLimitRecord(ended: RecordFile, why: string): RecordFile {
  return {
    ...ended,
    status: "failed",
    answer: null,
    answerErrors: unreadableErrors(why),
    error: {
      code: ended.reason,
      kind: "answer-over-limit",
      message: answerOverLimitMessage(why),
      retryAfter: null,
      tail: [],
    },
  };
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
