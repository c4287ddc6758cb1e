import { CatherdError } from "../../domain/errors.js";
import type { AnswerFile } from "../../domain/questions.js";
import { readQuestion, writeAnswer } from "../../folder/questions.js";
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
  answer: AnswerFile;
  asks: string;
}

const MAX_ANSWER_BYTES = 16 * 1024;

/** Writes the answer; E_QUESTION_NOT_FOUND for an id the dispatch never asked, E_ALREADY_ANSWERED for one answered. */
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
  if (entry.answer !== null) {
    throw new CatherdError(
      "E_ALREADY_ANSWERED",
      `${shown} ${id} is answered already (${entry.answer.allow ? "allowed" : "denied"} by ${entry.answer.by} at ${entry.answer.at})`,
      { fix: "the first answer stands; send a message (catherd send) to say more" },
    );
  }
  if (view.state === "recorded") {
    throw new CatherdError("E_NOT_STEERABLE", `${shown} has ended: ${id} can no longer be answered`, {
      fix: `follow it up: catherd send ${shown} "…"`,
    });
  }
  for (const [what, value] of [
    ["the answer", request.text],
    ["--why", request.why],
  ] as const) {
    if (value !== null) checkedText(what, value, MAX_ANSWER_BYTES);
  }
  const answer = { id, ...request, at: clock.wallNow().toISOString() };
  if (!writeAnswer(dir, answer)) {
    const first = readQuestion(dir, id)?.answer;
    throw new CatherdError(
      "E_INPUT_INVALID",
      `${shown} ${id} was answered first by ${first?.by ?? "another"}`,
      {
        fix: "the first answer stands",
      },
    );
  }
  return {
    dir,
    dispatchId: view.dispatchId,
    name: view.admit?.name ?? null,
    answer: { schema: 1, ...answer },
    asks: entry.question.asks,
  };
}
