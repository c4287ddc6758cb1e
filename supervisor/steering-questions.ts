import type { SteerProtocol } from "../src/backends/types.js";
import type { OnQuestion } from "../src/domain/schemas.js";
import {
  questionStep,
  type ResponseFile,
  type ResponseStep,
  responseStep,
  withdrawnResponse,
} from "../src/domain/steering/questions.js";
import type { NewQuestion } from "../src/domain/steering/steer-decisions.js";
import { notifyQuestion } from "../src/folder/notify.js";
import {
  markResponseDelivered,
  type QuestionEntry,
  questionIds,
  readQuestion,
  writeQuestion,
  writeResponse,
} from "../src/folder/question-files.js";
import type { WriteResult } from "./channel.js";
import type { SupervisorLog } from "./log.js";
import { pauseAt } from "./test-hooks.js";

// questions/ as the supervisor's side of a conversation keeps it (specs/steering.md, "Questions"; the
// edge of questionStep, src/domain/steering/questions.ts): the CLI's asks written as questions, the policy's answer
// written when due, each answer given to the CLI once.

export interface QuestionsInput {
  dir: string;
  onQuestion: OnQuestion | null;
  protocol: SteerProtocol;
  log: SupervisorLog;
  wallNow: () => Date;
  /** Writes a line to the CLI's channel. */
  write: (line: string) => WriteResult;
}

export class SteeringQuestions {
  /** The questions whose answer was given: they can no longer change. */
  private readonly settled = new Map<string, QuestionEntry>();
  /**
   * When the first question still waiting for its answer (as the last `answer` left them) is answered by
   * its policy, on the wall clock; null: none waits.
   */
  due: number | null = null;

  constructor(private readonly input: QuestionsInput) {}

  /** How many questions the dispatch has asked. */
  count(): number {
    return questionIds(this.input.dir).length;
  }

  /** The questions in the order asked; one whose answer was given is not read again. */
  read(): QuestionEntry[] {
    const all = readQuestionsExcept(this.input.dir, this.settled);
    for (const q of all) if (q.deliveredAt !== null) this.settled.set(q.question.id, q);
    return all;
  }

  /** Writes each new question (takeAsks); someone is to answer it: the dispatch's --notify runs, once. */
  write(questions: readonly NewQuestion[]): void {
    const { dir, log } = this.input;
    for (const { question, notify } of questions) {
      writeQuestion(dir, question);
      log("question", { id: question.id, kind: question.kind, asks: question.asks });
      if (notify) notifyQuestion(dir, question.id);
    }
  }

  /**
   * Closes each question whose ask the CLI withdrew (by its request's id) and whose answer it was not given:
   * answered as withdrawn unless someone answered first, marked delivered, nothing written to the CLI.
   */
  withdraw(requestIds: readonly (string | number)[]): void {
    const { dir, log } = this.input;
    for (const entry of this.read()) {
      const { id, request } = entry.question;
      if (entry.deliveredAt !== null || !requestIds.includes(request.id as string | number)) continue;
      const now = this.input.wallNow();
      writeResponse(dir, withdrawnResponse(id, now.toISOString()));
      markResponseDelivered(dir, id, now);
      log("withdrawn", { id });
    }
  }

  /** Each open question as questionStep says: its answer given, the policy's written, or waited for. */
  answer(): void {
    let due: number | null = null;
    for (const entry of this.read()) {
      const now = this.input.wallNow();
      const step = this.stepOf(entry, now);
      if (step.kind === "settled") continue;
      if (step.kind === "give" && this.give(entry, step.answer, now)) continue;
      due = due === null ? step.until : Math.min(due, step.until);
    }
    this.due = due;
  }

  /** A question's step; the policy's answer written when due, and the question read again. */
  private stepOf(entry: QuestionEntry, now: Date): ResponseStep {
    const { dir, onQuestion } = this.input;
    const step = questionStep(entry, onQuestion, now.getTime());
    if (step.kind !== "policy") return step;
    writeResponse(dir, step.answer);
    // The first answer stands: a person's that came first, else the policy's.
    return responseStep({ ...entry, answer: readQuestion(dir, entry.question.id)?.answer ?? null });
  }

  /** Gives the CLI a question's answer, once; false when the channel is closed. */
  private give(entry: QuestionEntry, answer: ResponseFile, now: Date): boolean {
    const { dir, protocol, log } = this.input;
    const line = protocol.responseLine(entry.question.request, entry.question.input, answer);
    if (this.input.write(line) === "closed") {
      log("channel-closed", { question: entry.question.id });
      return false;
    }
    pauseAt("answer-written", dir);
    markResponseDelivered(dir, entry.question.id, now);
    log("answered", { id: entry.question.id, allow: answer.allow, by: answer.by });
    return true;
  }
}

/** The questions of `dir`, those in `settled` as they were (they no longer change). */
function readQuestionsExcept(dir: string, settled: ReadonlyMap<string, QuestionEntry>): QuestionEntry[] {
  return questionIds(dir).flatMap((id) => {
    const known = settled.get(id) ?? readQuestion(dir, id);
    return known === null ? [] : [known];
  });
}
