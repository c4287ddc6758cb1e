import { z } from "zod";
import { isoTime, loose, schemaField } from "../schema-parts.js";
import type { OnQuestion } from "../schemas.js";
import type { DispatchState } from "../vocab.js";

// What an agent asks its caller — a permission (run this command? write this file?) or a question for
// the user — and the one response each gets (specs/steering.md, "Questions"). Pure.

export const QUESTION_KINDS = ["permission", "question"] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];

/**
 * The states of a dispatch whose questions can no longer be answered: it is being stopped, its agent has
 * exited, or both it and its supervisor are gone. A question it left without an answer is not waiting
 * for one (specs/steering.md).
 */
const ANSWERLESS_STATES: ReadonlySet<DispatchState> = new Set([
  "stopping",
  "exited",
  "verifying",
  "recorded",
  "lost",
]);

/** Whether a dispatch in this state still waits for the answers nobody has given. */
export function waitsForAnswers(state: DispatchState): boolean {
  return !ANSWERLESS_STATES.has(state);
}

/** `dispatch --on-question`, as spec.json's `steer.onQuestion` holds it (schemas.ts). */
export type { OnQuestion } from "../schemas.js";

/** questions/<id>.json: what the agent asked, written by the supervisor when the CLI asks. */
export const questionFileSchema = loose({
  schema: schemaField,
  id: z.string().min(1),
  kind: z.enum(QUESTION_KINDS),
  /** One line for `status` and `logs`: "run: npm test", "write src/a.ts", or the question itself. */
  asks: z.string(),
  /** The tool the permission is for, and its input as the CLI gave it (null for a question). */
  tool: z.string().nullable(),
  input: z.unknown(),
  askedAt: isoTime,
  /** When the policy answers if nobody has: null for no deadline (never: every policy has one). */
  answerBy: isoTime,
  /** What the CLI needs to match the answer to its ask (its request id), opaque to everyone else. */
  request: z.record(z.string(), z.unknown()),
});
export type QuestionFile = z.infer<typeof questionFileSchema>;

/** questions/<id>.answer.json: the one response, created exclusively by whoever answers first. */
export const responseFileSchema = loose({
  schema: schemaField,
  id: z.string().min(1),
  /** A permission: allow or deny. A question: the text (allow with it). */
  allow: z.boolean(),
  text: z.string().nullable(),
  why: z.string().nullable(),
  /** `catherd answer` (pid), the MCP server, or `policy` (the dispatch's --on-question). */
  by: z.string().min(1),
  at: isoTime,
});
export type ResponseFile = z.infer<typeof responseFileSchema>;

/** questions/<id>.delivered.json: the supervisor gave the response to the CLI (once). */
export const deliveredFileSchema = loose({ schema: schemaField, id: z.string().min(1), at: isoTime });

/** What a response says, before it is written: allow or deny, and a text (null without one). */
export type ResponseGiven = Pick<ResponseFile, "allow" | "text">;

/**
 * Why `given` does not answer a question of `kind`, or null when it does. A permission is answered by
 * allow or deny alone: a text to it ("no", "yes, but…") says neither, so it is refused rather than read
 * as an allow. A question is answered by its text, or declined by a deny: an allow without a text
 * answers nothing. The use case refuses such an answer; a supervisor given one anyway (a file written by
 * hand) denies (`responseAsGiven`).
 */
export function responseMismatch(kind: QuestionKind, given: ResponseGiven): string | null {
  if (kind === "permission" && given.text !== null)
    return "a permission is answered by allow or deny, not by a text";
  if (kind === "question" && given.allow && given.text === null)
    return "a question is answered by its text (or declined by a deny), not by an allow";
  return null;
}

/** The response the CLI is given: as written, or a deny saying why when it does not fit its question. */
export function responseAsGiven(kind: QuestionKind, answer: ResponseFile): ResponseFile {
  const mismatch = responseMismatch(kind, answer);
  if (mismatch === null) return answer;
  return { ...answer, allow: false, text: null, why: `denied by catherd: ${mismatch}` };
}

/** The response a policy gives when nobody answered. */
export function policyResponse(onQuestion: OnQuestion, id: string, at: string): Omit<ResponseFile, "schema"> {
  const allow = onQuestion.policy === "allow";
  const why =
    onQuestion.policy === "wait"
      ? `nobody answered within ${Math.round(onQuestion.waitMs / 1000)} s (--on-question wait)`
      : `--on-question ${onQuestion.policy}`;
  return { id, allow, text: null, why, by: "policy", at };
}

/**
 * The response that closes a question its CLI withdrew before it was answered (codex clears an approval
 * when its turn ends or is interrupted): nothing is given to the CLI, and nobody waits for it any more.
 */
export function withdrawnResponse(id: string, at: string): Omit<ResponseFile, "schema"> {
  return { id, allow: false, text: null, why: "withdrawn by the CLI before it was answered", by: "cli", at };
}

/** Question ids are short, for people to type: q1, q2, … in the order asked. */
export function questionId(n: number): string {
  return `q${n}`;
}

export function isQuestionId(value: string): boolean {
  return /^q[1-9]\d{0,5}$/.test(value);
}

/** A question as questions/ holds it: what was asked, its response, whether the response reached the CLI. */
export interface QuestionItem {
  question: Pick<QuestionFile, "id" | "kind" | "answerBy">;
  answer: ResponseFile | null;
  deliveredAt: string | null;
}

/**
 * What to do with one question at `wallMs`: the policy answers one nobody answered by its `answerBy`. The
 * first answer stands (a person's may have come first), so the edge reads the question again after
 * writing the policy's and goes on with `responseStep`.
 */
export type QuestionStep = ResponseStep | { kind: "policy"; answer: Omit<ResponseFile, "schema"> };

/**
 * What to do with a question whatever the time: nothing once its answer reached the CLI; give its answer
 * (as it fits its question: `responseAsGiven`), or wait for one; `until`: when the look comes back for it
 * (its answerBy; for a give, if the channel is closed).
 */
export type ResponseStep =
  | { kind: "settled" }
  | { kind: "wait"; until: number }
  | { kind: "give"; answer: ResponseFile; until: number };

export function questionStep(q: QuestionItem, onQuestion: OnQuestion | null, wallMs: number): QuestionStep {
  const open = q.deliveredAt === null && q.answer === null;
  if (open && onQuestion !== null && Date.parse(q.question.answerBy) <= wallMs) {
    return {
      kind: "policy",
      answer: policyResponse(onQuestion, q.question.id, new Date(wallMs).toISOString()),
    };
  }
  return responseStep(q);
}

export function responseStep(q: QuestionItem): ResponseStep {
  if (q.deliveredAt !== null) return { kind: "settled" };
  const until = Date.parse(q.question.answerBy);
  if (q.answer === null) return { kind: "wait", until };
  return { kind: "give", answer: responseAsGiven(q.question.kind, q.answer), until };
}
