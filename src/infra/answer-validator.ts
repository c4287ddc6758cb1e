import { ACCEPTED_DRAFTS, type SchemaDraft, schemaDraftOf } from "../domain/ending/answer-contract.js";
import type { AnswerError } from "../domain/schemas.js";
import { linearRegExp, linearUniqueItems } from "./answer-linear-checks.js";

// The JSON Schema validator of --answer-schema (specs/dispatch.md, "An answer that fits a schema"): ajv's
// build of the draft the schema names (2020-12 without `$schema`; 2019-09 and draft-07 by their own
// classes, which ajv keeps apart: one instance validates one draft). Imported only here, and only when a dispatch has a schema — at admission, to check
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
 * Compiles `schema` in the draft its `$schema` names (domain/ending/answer-contract.ts `schemaDraftOf`). Never throws for a
 * bad schema: a value that is not a schema, a `$schema` of no draft catherd checks (in catherd's words,
 * naming those it does), an unresolvable `$ref` (in ajv's) give `{ok: false, problem}`.
 */
export async function compileAnswerSchema(schema: unknown): Promise<CompiledSchema> {
  const draft = schemaDraftOf(schema);
  if (typeof draft !== "string") {
    return {
      ok: false,
      problem: `its $schema ${JSON.stringify(draft.unknown)} names no draft catherd checks; it checks ${ACCEPTED_DRAFTS}`,
    };
  }
  const ajv = new (await ajvClass(draft))({
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
    // The class is the draft: the root's $schema, in whichever spelling it was matched, is not looked up.
    const check = ajv.compile(withoutRootDraft(schema));
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

function withoutRootDraft(schema: object | boolean): object | boolean {
  if (typeof schema === "boolean" || !Object.hasOwn(schema, "$schema")) return schema;
  const { $schema: _named, ...rest } = schema as Record<string, unknown>;
  return rest;
}

const loaded = new Map<SchemaDraft, Promise<AjvClass>>();

/** ajv's class for a draft, imported once (each a module of its own: only the one a schema needs). */
function ajvClass(draft: SchemaDraft): Promise<AjvClass> {
  let found = loaded.get(draft);
  if (found === undefined) {
    found = importDraft(draft).then((mod) => {
      // A CommonJS module: its `module.exports` is the class, and carries the class as `default` too.
      const exported = mod.default as unknown as AjvClass & { default?: AjvClass };
      return exported.default ?? exported;
    });
    loaded.set(draft, found);
  }
  return found;
}

function importDraft(draft: SchemaDraft): Promise<{ default: unknown }> {
  if (draft === "2019-09") return import("ajv/dist/2019.js");
  if (draft === "draft-07") return import("ajv/dist/ajv.js");
  return import("ajv/dist/2020.js");
}
