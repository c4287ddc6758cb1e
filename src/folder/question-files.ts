import * as fs from "node:fs";
import * as path from "node:path";
import { SCHEMA_VERSION } from "../domain/schema-parts.js";
import {
  deliveredFileSchema,
  isQuestionId,
  type QuestionFile,
  questionFileSchema,
  type ResponseFile,
  responseFileSchema,
} from "../domain/steering/questions.js";
import { createJsonExclusive, makeDir, writeJsonAtomic } from "../infra/atomic.js";
import { readJsonFile } from "../infra/json-file.js";
import { FILES } from "./layout.js";

// questions/ of a dispatch folder (specs/steering.md, "Questions"): `<id>.json`, what the agent asked
// (the supervisor writes it); `<id>.answer.json`, the one response (created exclusively by whoever answers
// first: a person, an orchestrator, or the policy); `<id>.delivered.json`, the supervisor gave it to the CLI.

export function questionsDir(dir: string): string {
  return path.join(dir, FILES.questions);
}

const fileOf = (dir: string, id: string, suffix: string) => path.join(questionsDir(dir), `${id}${suffix}`);

export interface QuestionEntry {
  question: QuestionFile;
  answer: ResponseFile | null;
  deliveredAt: string | null;
}

export function writeQuestion(dir: string, question: Omit<QuestionFile, "schema">): void {
  makeDir(questionsDir(dir));
  writeJsonAtomic(fileOf(dir, question.id, ".json"), { schema: SCHEMA_VERSION, ...question });
}

/** The ids of the questions asked, in the order asked (q1, q2, …). */
export function questionIds(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(questionsDir(dir));
  } catch {
    return [];
  }
  return names
    .filter((n) => /^q\d+\.json$/.test(n))
    .map((n) => n.slice(0, -".json".length))
    .filter(isQuestionId)
    .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
}

export function readQuestion(dir: string, id: string): QuestionEntry | null {
  const question = readJsonFile(fileOf(dir, id, ".json"), questionFileSchema);
  if (question.kind !== "ok") return null;
  const answer = readJsonFile(fileOf(dir, id, ".answer.json"), responseFileSchema);
  const delivered = readJsonFile(fileOf(dir, id, ".delivered.json"), deliveredFileSchema);
  return {
    question: question.value,
    answer: answer.kind === "ok" ? answer.value : null,
    deliveredAt: delivered.kind === "ok" ? delivered.value.at : null,
  };
}

export function readQuestions(dir: string): QuestionEntry[] {
  return questionIds(dir)
    .map((id) => readQuestion(dir, id))
    .filter((q): q is QuestionEntry => q !== null);
}

/** Answers a question; false when it had a response already (the first one stands). */
export function writeResponse(dir: string, answer: Omit<ResponseFile, "schema">): boolean {
  return createJsonExclusive(fileOf(dir, answer.id, ".answer.json"), { schema: SCHEMA_VERSION, ...answer });
}

export function markResponseDelivered(dir: string, id: string, at: Date): void {
  writeJsonAtomic(fileOf(dir, id, ".delivered.json"), { schema: SCHEMA_VERSION, id, at: at.toISOString() });
}
