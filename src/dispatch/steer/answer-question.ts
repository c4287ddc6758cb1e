import { CatherdError } from "../../domain/errors.js";
import { type ResponseFile, responseMismatch } from "../../domain/steering/questions.js";
import { type QuestionEntry, readQuestion, writeResponse } from "../../folder/question-files.js";
import { type Clock, systemClock } from "../../infra/clock.js";
import { inspectDispatch } from "../read/inspect.js";
import { checkedText } from "./text.js";

// `catherd answer` and the MCP `answer` tool (specs/steering.md, "Questions"): the one answer to what the
// agent asked. The first answer stands — a person's, an orchestrator's, or the policy's when its wait is
// over — and its supervisor gives it to the CLI once.

export interface AnswerRequest {
  /** A permission: allow or deny. A question: its text (which allows). */
  allow: boolean;
  text: string | null;
  why: string | null;
  by: string;
}

export interface Answered {
  dir: string;
  dispatchId: string;
  name: string | null;
  answer: ResponseFile;
  asks: string;
}

const MAX_ANSWER_BYTES = 16 * 1024;

/**
 * Writes the answer; E_QUESTION_NOT_FOUND for an id the dispatch never asked, E_ALREADY_ANSWERED for one
 * answered (however close the other answer came: the exclusive create decides), E_INPUT_INVALID for an
 * answer that does not fit its question (a text to a permission, an allow to a question).
 */
export function answerQuestion(
  dir: string,
  id: string,
  request: AnswerRequest,
  clock: Clock = systemClock,
): Answered {
  const view = inspectDispatch(dir, { clock });
  const shown = view.admit?.name ?? view.dispatchId;
  const entry = readQuestion(dir, id);
  if (entry === null) {
    throw new CatherdError("E_QUESTION_NOT_FOUND", `${shown} asked no question ${id}`, {
      fix: `catherd show ${shown} lists what it asked`,
    });
  }
  if (view.state === "recorded") {
    if (entry.answer !== null) throw answeredAlready(shown, id, entry.answer);
    throw new CatherdError("E_NOT_STEERABLE", `${shown} has ended: ${id} can no longer be answered`, {
      fix: `follow it up: catherd send ${shown} "…"`,
    });
  }
  checkAnswer(shown, entry, request);
  const answer = { id, ...request, at: clock.wallNow().toISOString() };
  // The exclusive create alone says who was first: a second answer, however close, is refused here.
  if (!writeResponse(dir, answer)) {
    const first = readQuestion(dir, id)?.answer ?? null;
    throw answeredAlready(shown, id, first);
  }
  return {
    dir,
    dispatchId: view.dispatchId,
    name: view.admit?.name ?? null,
    answer: { schema: 1, ...answer },
    asks: entry.question.asks,
  };
}

/** E_INPUT_INVALID for a text that is not one, or an answer its question does not take. */
function checkAnswer(shown: string, entry: QuestionEntry, request: AnswerRequest): void {
  for (const [what, value] of [
    ["the answer", request.text],
    ["--why", request.why],
  ] as const) {
    if (value !== null) checkedText(what, value, MAX_ANSWER_BYTES);
  }
  const { id, kind, asks } = entry.question;
  const mismatch = responseMismatch(kind, request);
  if (mismatch === null) return;
  throw new CatherdError("E_INPUT_INVALID", `${shown} ${id} (${asks}): ${mismatch}`, {
    fix:
      kind === "permission"
        ? `answer ${shown} ${id} with --allow or --deny (and --why "…", for the agent to read)`
        : `answer ${shown} ${id} with its text, or decline it with --deny (and --why "…")`,
  });
}

/** E_ALREADY_ANSWERED, naming the answer that stands (`first`: null when it cannot be read). */
function answeredAlready(shown: string, id: string, first: ResponseFile | null): CatherdError {
  const said = first === null ? "" : ` (${responseWords(first)} by ${first.by} at ${first.at})`;
  return new CatherdError("E_ALREADY_ANSWERED", `${shown} ${id} is answered already${said}`, {
    fix: "the first answer stands; send a message (catherd send) to say more",
  });
}

function responseWords(answer: ResponseFile): string {
  if (answer.text !== null) return `answered ${JSON.stringify(answer.text.slice(0, 80))}`;
  return answer.allow ? "allowed" : "denied";
}
