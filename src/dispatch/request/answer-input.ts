import * as fs from "node:fs";
import * as path from "node:path";
import type { Backend } from "../../backends/types.js";
import {
  ACCEPTED_DRAFTS,
  answerContract,
  draftWords,
  schemaDraftOf,
} from "../../domain/ending/answer-contract.js";
import { CatherdError } from "../../domain/errors.js";
import { appendToBrief } from "./brief-append.js";
import type { Concern, FlagValues } from "./concern.js";

// `dispatch --answer-schema FILE` and `--repair N` (the MCP tool: `answerSchema`, the schema inline, and
// `repair`), checked before anything is written (specs/dispatch.md, "An answer that fits a schema"). The
// validator is imported only here and only when a schema is given: the plain dispatch never loads it.

/** The answer a dispatch asks for: its JSON Schema (parsed, and as the text the folder keeps), the repairs. */
export interface AnswerRequest {
  schema: unknown;
  /** The schema as answer-schema.json holds it, and as Claude's --json-schema and the briefs carry it. */
  text: string;
  /** Repair turns at most, on the same thread, for an answer that does not fit (--repair, default 1). */
  repair: number;
}

/** The default of --repair: one turn with the validator's errors. */
export const DEFAULT_REPAIRS = 1;
/** --repair at most: a model that misses a schema five times in a row will not hit it on the sixth. */
export const MAX_REPAIRS = 5;
/** The largest schema accepted: it is copied into the folder, and for Claude Code onto its command line. */
export const MAX_SCHEMA_BYTES = 64 * 1024;

/** Where the schema comes from: a file named on the command line, or an object the MCP tool was given. */
export type AnswerSchemaSource = { file: string } | { inline: unknown };

function invalid(message: string, fix: string): CatherdError {
  return new CatherdError("E_INPUT_INVALID", message, { fix });
}

/**
 * The answer asked for, or null without --answer-schema. E_INPUT_INVALID for --repair without a schema, a
 * --repair that is not 0 to MAX_REPAIRS, a file that cannot be read, is too large, is not JSON, names a
 * `$schema` of no draft catherd checks (naming those it does), or is not a valid schema of its draft
 * (naming the file and the validator's first error).
 */
export async function answerInput(
  source: AnswerSchemaSource | null,
  repairText: string | undefined,
): Promise<AnswerRequest | null> {
  if (source === null) {
    if (repairText !== undefined) {
      throw invalid("--repair needs --answer-schema", "give --answer-schema <file>, or leave out --repair");
    }
    return null;
  }
  const repair = repairText === undefined ? DEFAULT_REPAIRS : parseRepair(repairText);
  const { schema, text, what } = "file" in source ? readSchemaFile(source.file) : inlineSchema(source.inline);
  const draft = schemaDraftOf(schema);
  if (typeof draft !== "string") {
    throw invalid(
      `${what} names $schema ${JSON.stringify(draft.unknown)}, a draft of JSON Schema catherd does not check`,
      `write the schema in ${ACCEPTED_DRAFTS}, then dispatch again`,
    );
  }
  // Loaded only now: a dispatch without a schema never imports the validator.
  const { compileAnswerSchema } = await import("../../infra/answer-validator.js");
  const compiled = await compileAnswerSchema(schema);
  if (!compiled.ok) {
    throw invalid(
      `${what} is not a valid JSON Schema (${draftWords(draft)}): ${compiled.problem}`,
      "fix the schema (https://json-schema.org/specification), then dispatch again",
    );
  }
  return { schema, text, repair };
}

function parseRepair(text: string): number {
  if (!/^[0-9]{1,2}$/.test(text) || Number(text) > MAX_REPAIRS) {
    throw invalid(
      `--repair ${JSON.stringify(text.slice(0, 40))} is not a whole number from 0 to ${MAX_REPAIRS}`,
      `give --repair 0 (no repair turn) to ${MAX_REPAIRS}; the default is ${DEFAULT_REPAIRS}`,
    );
  }
  return Number(text);
}

function readSchemaFile(file: string): { schema: unknown; text: string; what: string } {
  const what = `--answer-schema ${file}`;
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw invalid(`${what} cannot be read (${code})`, "give the path of a JSON Schema file");
  }
  if (bytes.length > MAX_SCHEMA_BYTES) {
    throw invalid(
      `${what} is ${bytes.length} bytes, over the ${MAX_SCHEMA_BYTES}-byte limit of a schema`,
      "give a smaller schema",
    );
  }
  const text = bytes.toString("utf8");
  try {
    return { schema: JSON.parse(text), text, what };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw invalid(`${what} is not JSON: ${why}`, "give a JSON Schema file (JSON text)");
  }
}

function inlineSchema(schema: unknown): { schema: unknown; text: string; what: string } {
  const text = `${JSON.stringify(schema, null, 2)}\n`;
  if (Buffer.byteLength(text) > MAX_SCHEMA_BYTES) {
    throw invalid(
      `--answer-schema is over the ${MAX_SCHEMA_BYTES}-byte limit of a schema`,
      "give a smaller schema",
    );
  }
  return { schema, text, what: "--answer-schema" };
}

/**
 * The brief as a CLI without a schema flag of its own gets it (Backend.answerSchemaFlag false): the
 * orchestrator's bytes, a blank line, the contract and the schema. Others get the brief untouched.
 */
export function withAnswerContract(
  brief: Buffer | null,
  backend: Backend,
  answer: AnswerRequest | null,
): Buffer | null {
  if (brief === null || answer === null || backend.answerSchemaFlag) return brief;
  return appendToBrief(brief, answerContract(answer.text));
}

/** The input key under which the MCP dispatch tool passes `answerSchema`, the schema inline, as JSON text. */
export const INLINE_ANSWER_SCHEMA = "answer-schema-inline";

/**
 * The answer asked for by the flags (`answerSchema`, the inline schema, `repair`), read and checked:
 * the one asynchronous check of a request, made before the others (answerInput). E_INPUT_INVALID with
 * `--outcome` too: where the CLI keeps to the schema itself (codex, Claude) the final message can hold
 * nothing else, and for the others a STATUS line after the value would make it no JSON.
 */
export async function readAnswer(flags: FlagValues): Promise<AnswerRequest | null> {
  const source = answerSchemaSource(flags);
  if (flags.outcome === true && source !== null) {
    throw invalid(
      "--outcome and --answer-schema cannot be given together",
      "leave out --outcome and put the worker's status in the schema (e.g. a required `status` property)",
    );
  }
  return answerInput(source, typeof flags.repair === "string" ? flags.repair : undefined);
}

/**
 * Where --answer-schema comes from: a file (relative to this process's folder), or the object the MCP
 * tool was given inline (INLINE_ANSWER_SCHEMA, JSON text: the command line has no such flag).
 */
function answerSchemaSource(flags: FlagValues): AnswerSchemaSource | null {
  const inline = flags.answerSchemaInline;
  if (typeof inline === "string") return { inline: JSON.parse(inline) as unknown };
  const file = flags.answerSchema;
  return typeof file === "string" ? { file: path.resolve(file) } : null;
}

/** The answer concern: --answer-schema and --repair, read by readAnswer, judged against the backend. */
export const answer = {
  options: {
    "answer-schema": {
      type: "string",
      value: "<file>",
      description:
        "a JSON Schema the agent's final answer must be valid against (draft 2020-12; draft-07 or 2019-09 when its $schema names them): catherd checks it, records it as `answer` and answer.json, and `result --answer` prints it",
    },
    repair: {
      type: "string",
      value: "<n>",
      integer: true,
      description: `with --answer-schema: turns on the same thread, with the validator's errors, for an answer that does not fit (0: none; at most ${MAX_REPAIRS})`,
      default: "1",
    },
  },
  validate(raw, { backend }) {
    const asked = raw.answer ?? null;
    if (asked !== null && backend.id === "exec") {
      throw invalid(
        "--answer-schema is for an agent's final answer; exec runs a command",
        "leave out --answer-schema, or check the command's output yourself",
      );
    }
    return { answer: asked };
  },
  // A chain's attempts answer to one schema (as its folder keeps it); a follow-up asks anew, or not.
  carry: ({ answer, ladder }, to) =>
    to.kind === "follow-up"
      ? {}
      : { answer: answer == null ? null : { ...answer, repair: ladder?.repairs ?? 0 } },
} satisfies Concern<{ answer?: AnswerRequest | null }, { answer: AnswerRequest | null }>;
