import type { AnswerError } from "../schemas.js";
import { valueDeeperThan } from "../text/json-depth.js";
import { MAX_REPLY_CHARS } from "./summary.js";

// An answer that fits a schema (specs/record.md, "The answer"; specs/dispatch.md, "An answer that fits a
// schema"): how the final answer is read from what the CLI gave, the words a CLI without a schema flag of
// its own is told, and the brief of a repair turn. Pure: the validator is loaded elsewhere
// (src/infra/answer-validator.ts), only for a dispatch that has a schema.

/**
 * What --answer-schema appends to the brief of a CLI that has no schema flag of its own (gemini,
 * opencode), after a blank line, as --lock-hint appends its line: one fixed contract, the schema beside.
 */
export const ANSWER_CONTRACT_HEAD =
  "When you are done, end with your final answer: only a JSON value that is valid against the JSON " +
  "Schema below — no other text before or after it, no Markdown fence. catherd reads your last message as " +
  "that JSON and checks it against the schema.";

/** The contract as appended: the head, then the schema (at most MAX_SCHEMA_IN_BRIEF characters of it). */
export function answerContract(schemaText: string): string {
  return `${ANSWER_CONTRACT_HEAD}\n\nJSON Schema:\n${schemaInBrief(schemaText)}\n`;
}

/** The most of a schema's text a brief carries: a schema larger than this is named by its start. */
export const MAX_SCHEMA_IN_BRIEF = 64 * 1024;

function schemaInBrief(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MAX_SCHEMA_IN_BRIEF
    ? `${trimmed.slice(0, MAX_SCHEMA_IN_BRIEF)}\n[schema cut by catherd]`
    : trimmed;
}

/**
 * The drafts of JSON Schema an answer schema may be written in: those ajv 8 validates by a class of its
 * own. A schema names its draft by its root `$schema`; one without it is 2020-12.
 */
export const SCHEMA_DRAFTS = ["2020-12", "2019-09", "draft-07"] as const;
export type SchemaDraft = (typeof SCHEMA_DRAFTS)[number];

/** Each draft's `$schema`, without its scheme and its empty fragment ("http://…#" and "https://…" alike). */
const DRAFT_OF_URI: Readonly<Record<string, SchemaDraft>> = {
  "json-schema.org/draft/2020-12/schema": "2020-12",
  "json-schema.org/draft/2019-09/schema": "2019-09",
  "json-schema.org/draft-07/schema": "draft-07",
};

/** What `$schema` may say, in a refusal's words. */
export const ACCEPTED_DRAFTS =
  'draft 2020-12 (no $schema, or "https://json-schema.org/draft/2020-12/schema"), ' +
  'draft 2019-09 ("https://json-schema.org/draft/2019-09/schema") or draft-07 ("http://json-schema.org/draft-07/schema#")';

/**
 * The draft a schema is written in, by its root `$schema` (2020-12 without one), or `{unknown}` with the
 * `$schema` it gives that is none of SCHEMA_DRAFTS (draft-04, a misspelt URI, a number).
 */
export function schemaDraftOf(schema: unknown): SchemaDraft | { unknown: unknown } {
  if (typeof schema !== "object" || schema === null || !Object.hasOwn(schema, "$schema")) return "2020-12";
  const named = (schema as { $schema: unknown }).$schema;
  if (typeof named !== "string") return { unknown: named };
  const key = named
    .trim()
    .replace(/^https?:\/\//, "")
    .replace(/#$/, "");
  return DRAFT_OF_URI[key] ?? { unknown: named };
}

/** "draft 2020-12", "draft-07": a draft as the words of a message name it. */
export function draftWords(draft: SchemaDraft): string {
  return draft.startsWith("draft-") ? draft : `draft ${draft}`;
}

/**
 * The final answer as catherd reads it: a JSON value, or why there is none — `overLimit` when the cause
 * is one of catherd's limits (its size, its depth, a line too long to keep), not what the worker wrote.
 */
export type AnswerRead = { ok: true; value: unknown } | { ok: false; overLimit: boolean; message: string };

/**
 * The deepest an answer may nest arrays and objects. Every walk over it — the validator, the record's
 * writer, every reader that renders it — recurses, so an answer deeper than this is not read at all.
 */
export const MAX_ANSWER_DEPTH = 64;

/** The longest answer as JSON text: the reply's own limit, so that an answer is never cut. */
export const MAX_ANSWER_CHARS = MAX_REPLY_CHARS;

/** A fence around the whole message: ```json … ``` (or ``` … ```), nothing outside it but white space. */
const WHOLE_FENCE = /^```[ \t]*(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/i;

/**
 * The answer of a dispatch: the CLI's structured answer when it gave one (Claude Code's result
 * `structured_output`), else the final message as JSON. Lenient in one way only: a single Markdown
 * fence (```json) around the whole message is taken off, since models add one however they are told;
 * JSON inside prose is not searched for — an answer is the message, not something found in it.
 * `droppedLineBytes`: the line limit, when a line of the event stream over it was dropped after the last
 * reply text (the final message may have been in it); null when none was.
 */
export function readAnswer(
  structured: unknown,
  reply: string | null,
  droppedLineBytes: number | null,
): AnswerRead {
  if (structured !== undefined) return structuredAnswer(structured);
  const dropped = droppedLineBytes === null ? null : droppedLineWords(droppedLineBytes);
  if (reply === null || reply.trim() === "") {
    return dropped ?? unread("the final message is empty: there is no answer to read");
  }
  // Only a cut reply is longer than MAX_REPLY_CHARS (src/domain/ending/summary.ts adds its marker past it).
  if (reply.length > MAX_REPLY_CHARS) {
    return overLimit(
      `the final message is over catherd's limit of ${MAX_REPLY_CHARS.toLocaleString("en-US")} characters: catherd kept only its start`,
    );
  }
  const trimmed = reply.trim();
  const text = WHOLE_FENCE.exec(trimmed)?.[1] ?? trimmed;
  if (nestsDeeperThan(text, MAX_ANSWER_DEPTH)) return overLimit(depthWords());
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return dropped ?? unread(`the final message is not JSON (${why})`);
  }
}

/** A structured answer as given, unless it is deeper or longer than catherd takes. */
function structuredAnswer(value: unknown): AnswerRead {
  if (valueDeeperThan(value, MAX_ANSWER_DEPTH)) return overLimit(depthWords());
  // Depth-bounded now, so stringifying it cannot overflow the stack; a structured answer is at most a line.
  const chars = JSON.stringify(value)?.length ?? 0;
  if (chars > MAX_ANSWER_CHARS) {
    return overLimit(
      `the answer is over catherd's limit of ${MAX_ANSWER_CHARS.toLocaleString("en-US")} characters of JSON (${chars.toLocaleString("en-US")})`,
    );
  }
  return { ok: true, value };
}

function depthWords(): string {
  return `the answer nests arrays and objects deeper than catherd's limit of ${MAX_ANSWER_DEPTH} levels`;
}

function droppedLineWords(limitBytes: number): AnswerRead {
  return overLimit(
    `a line of the CLI's output was over catherd's limit of ${limitBytes / (1024 * 1024)} MiB a line and was dropped: the final message in it could not be read`,
  );
}

function overLimit(message: string): AnswerRead {
  return { ok: false, overLimit: true, message };
}

function unread(message: string): AnswerRead {
  return { ok: false, overLimit: false, message };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSERS = new Set([0x5d, 0x7d]);

/**
 * Whether JSON text nests arrays and objects deeper than `limit`: one linear scan that skips strings,
 * done before the parse so that a deep text is never built into a value. A text that does not start with
 * `[` or `{` is no deep value (prose is left to the parse, which refuses it: the worker's mistake).
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  if (!OPENERS.has(text.charCodeAt(0))) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i += 1;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (OPENERS.has(c)) {
      depth += 1;
      if (depth > limit) return true;
    } else if (CLOSERS.has(c)) depth -= 1;
  }
  return false;
}

/** The errors of a final message that is not JSON at all: one, at the answer's root. */
export function unreadableErrors(message: string): AnswerError[] {
  return [{ path: "", message }];
}

/** The most errors a record and a repair brief carry: the first ones are what a repair needs. */
export const MAX_ANSWER_ERRORS = 20;

/**
 * The longest path or message of one error kept: both can quote the answer (a property's name), which is
 * the agent's and may be a megabyte long.
 */
export const MAX_ANSWER_ERROR_CHARS = 500;

/** The errors a record and a repair brief carry: the first MAX_ANSWER_ERRORS, each cut to its limit. */
export function keptAnswerErrors(errors: readonly AnswerError[]): AnswerError[] {
  return errors.slice(0, MAX_ANSWER_ERRORS).map((e) => ({ path: cut(e.path), message: cut(e.message) }));
}

function cut(text: string): string {
  return text.length > MAX_ANSWER_ERROR_CHARS ? `${text.slice(0, MAX_ANSWER_ERROR_CHARS)}…` : text;
}

/** "/count must be >= 0; (root) must have required property 'verdict'". */
export function errorsText(errors: readonly AnswerError[]): string {
  return errors.map((e) => `${e.path === "" ? "(root)" : e.path} ${e.message}`).join("; ");
}

/**
 * The brief of a repair turn, sent on the same thread: the validator's errors, the schema, and what to
 * answer — only the corrected JSON.
 */
export function repairBrief(errors: readonly AnswerError[], schemaText: string): string {
  const lines = errors.map((e) => `- ${e.path === "" ? "(root)" : e.path}: ${e.message}`);
  return [
    "Your answer did not fit the JSON Schema it must be valid against. The validator said:",
    ...lines,
    "",
    "Reply with only the corrected JSON value — no other text, no Markdown fence. The JSON Schema:",
    schemaInBrief(schemaText),
    "",
  ].join("\n");
}

/**
 * record.error.message of an answer over catherd's limits: which limit, and that no repair turn follows —
 * the worker did nothing wrong that it could be asked to fix.
 */
export function answerOverLimitMessage(why: string): string {
  return `the answer is over catherd's limits: ${why}; no repair turn follows (the limit is catherd's, not a mistake of the worker's)`;
}

/**
 * record.error.message of an answer that did not fit: what the validator said, then what follows — a
 * repair on the same thread, or why none does.
 */
export function answerInvalidMessage(
  errors: readonly AnswerError[],
  then: "repair" | "no-repairs" | { unresumable: string },
): string {
  const said = `the answer does not fit --answer-schema: ${errorsText(errors)}`;
  if (then === "repair") return `${said}; a repair turn follows on the same thread`;
  if (then === "no-repairs") return said;
  return `${said}; no repair is possible: ${then.unresumable}`;
}
