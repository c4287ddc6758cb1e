import type { AnswerError } from "../domain/schemas.js";
import { linearRegExp, linearUniqueItems } from "./answer-linear-checks.js";

// The JSON Schema validator of --answer-schema (specs/dispatch.md, "An answer that fits a schema"): ajv's
// draft 2020-12 build. Imported only here, and only when a dispatch has a schema — at admission, to check
// the schema, and by the record writer, to check the answer — so the plain dispatch path never loads it
// (ajv's import and its compile of a schema against the meta-schema cost a tenth of a second or more).
// The answer is the agent's to choose, so the two keywords whose time ajv lets grow faster than the
// answer — `pattern` (backtracking) and `uniqueItems` (every pair) — are checked in linear time instead
// (src/infra/answer-linear-checks.ts).

/** A compiled schema: the errors of a value against it, [] when it fits. */
export interface AnswerValidator {
  validate(value: unknown): AnswerError[];
}

/** The compiled schema, or the validator's words on why the schema is not one (its first error). */
export type CompiledSchema = { ok: true; validator: AnswerValidator } | { ok: false; problem: string };

interface AjvError {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}
interface AjvInstance {
  removeKeyword(keyword: string): unknown;
  addKeyword(definition: Record<string, unknown>): unknown;
  compile(schema: unknown): ((value: unknown) => boolean) & { errors?: AjvError[] | null };
  errorsText(errors?: AjvError[] | null): string;
}
type AjvClass = new (options: Record<string, unknown>) => AjvInstance;

/**
 * Compiles `schema` as draft 2020-12. Never throws for a bad schema: a value that is not a schema, an
 * unknown `$schema`, an unresolvable `$ref` give `{ok: false, problem}` in ajv's words.
 */
export async function compileAnswerSchema(schema: unknown): Promise<CompiledSchema> {
  const ajv = new (await ajvClass())({
    // Every error, so that one repair turn can fix them all.
    allErrors: true,
    // A user's schema may carry keywords of its own (JSON Schema ignores unknown keywords): not refused.
    strict: false,
    // `format` is an annotation in 2020-12 unless a vocabulary asserts it; ajv would warn on stderr.
    validateFormats: false,
    logger: false,
    code: { regExp: linearRegExp },
  });
  if (
    typeof schema !== "boolean" &&
    (typeof schema !== "object" || schema === null || Array.isArray(schema))
  ) {
    return { ok: false, problem: "a JSON Schema is an object (or true or false)" };
  }
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword(linearUniqueItems);
  try {
    const check = ajv.compile(schema);
    return {
      ok: true,
      validator: {
        validate(value) {
          if (check(value)) return [];
          return (check.errors ?? []).map(answerErrorOf);
        },
      },
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, problem: message.replace(/^schema is invalid: /, "") };
  }
}

/** One ajv error in catherd's record: the path into the answer and ajv's message, with the name it means. */
function answerErrorOf(error: AjvError): AnswerError {
  const extra =
    error.keyword === "additionalProperties" && typeof error.params.additionalProperty === "string"
      ? ` (${JSON.stringify(error.params.additionalProperty)})`
      : error.keyword === "enum" && Array.isArray(error.params.allowedValues)
        ? `: ${error.params.allowedValues.map((v) => JSON.stringify(v)).join(", ")}`
        : "";
  return { path: error.instancePath, message: `${error.message ?? error.keyword}${extra}` };
}

let loaded: Promise<AjvClass> | null = null;

/** ajv's 2020-12 class, imported once. */
function ajvClass(): Promise<AjvClass> {
  loaded ??= import("ajv/dist/2020.js").then((mod) => {
    // A CommonJS module: its `module.exports` is the class, and carries the class as `default` too.
    const exported = mod.default as unknown as AjvClass & { default?: AjvClass };
    return exported.default ?? exported;
  });
  return loaded;
}
