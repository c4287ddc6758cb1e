import type { MessageState } from "../domain/steering/inbox.js";
import { type QuestionKind, waitsForAnswers } from "../domain/steering/questions.js";
import type { DispatchState } from "../domain/vocab.js";
import { readInbox } from "./inbox-files.js";
import { readQuestions } from "./question-files.js";

// A steerable dispatch's steering as readers show it (specs/steering.md, "What readers show"): its
// messages with their states, and what the agent asked with the answers — read from inbox/ and questions/.

export interface MessageView {
  id: string;
  state: MessageState;
  /** The message's first line, at most 80 characters ("" for a file that is not a message). */
  head: string;
  interrupt: boolean;
  sentAt: string | null;
  /** When it reached its state, and why for `failed`. */
  at: string | null;
  why: string | null;
  /** Every change, in order: what `logs` prints a line for. */
  history: { state: MessageState; at: string; why: string | null }[];
}

export interface QuestionView {
  id: string;
  kind: QuestionKind;
  asks: string;
  askedAt: string;
  answerBy: string;
  answer: { allow: boolean; text: string | null; why: string | null; by: string; at: string } | null;
  delivered: boolean;
  /** Not answered, and the dispatch can still take an answer; false once it is stopping or has ended. */
  waiting: boolean;
}

export interface SteeringView {
  messages: MessageView[];
  questions: QuestionView[];
  /** The questions nobody has answered yet while the dispatch can still take one: it waits for an answer. */
  waiting: QuestionView[];
}

/** What record.json's `steering` counts (specs/record.md, "steering"). */
export interface SteeringCounts {
  messages: Record<MessageState, number>;
  questions: { asked: number; answered: number; byPolicy: number; unanswered: number };
}

/**
 * The steering of the dispatch in `dir`, its questions judged by the dispatch's `state`: one left
 * unanswered by a dispatch that is stopping or has ended waits for nothing (waitsForAnswers).
 */
export function readSteering(dir: string, state: DispatchState): SteeringView {
  const waits = waitsForAnswers(state);
  const messages = readInbox(dir).map((entry): MessageView => {
    const last = entry.receipt?.history.at(-1) ?? null;
    const text = entry.message?.text ?? "";
    const head = (text.split("\n")[0] ?? "").slice(0, 80);
    return {
      id: entry.id,
      state: entry.state,
      head,
      interrupt: entry.message?.interrupt ?? false,
      sentAt: entry.message?.sentAt ?? null,
      at: last?.at ?? entry.message?.sentAt ?? null,
      why: last?.why ?? null,
      history: (entry.receipt?.history ?? []).map((h) => ({ state: h.state, at: h.at, why: h.why ?? null })),
    };
  });
  const questions = readQuestions(dir).map(
    (q): QuestionView => ({
      id: q.question.id,
      kind: q.question.kind,
      asks: q.question.asks,
      askedAt: q.question.askedAt,
      answerBy: q.question.answerBy,
      answer:
        q.answer === null
          ? null
          : {
              allow: q.answer.allow,
              text: q.answer.text,
              why: q.answer.why,
              by: q.answer.by,
              at: q.answer.at,
            },
      delivered: q.deliveredAt !== null,
      waiting: waits && q.answer === null,
    }),
  );
  return { messages, questions, waiting: questions.filter((q) => q.waiting) };
}

export function steeringCounts(view: SteeringView): SteeringCounts {
  const messages: Record<MessageState, number> = { queued: 0, delivered: 0, acted: 0, failed: 0 };
  for (const m of view.messages) messages[m.state] += 1;
  const answered = view.questions.filter((q) => q.answer !== null);
  return {
    messages,
    questions: {
      asked: view.questions.length,
      answered: answered.length,
      byPolicy: answered.filter((q) => q.answer?.by === "policy").length,
      unanswered: view.questions.length - answered.length,
    },
  };
}
