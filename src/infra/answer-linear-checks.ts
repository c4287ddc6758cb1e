import { RE2JS } from "re2js";

// The checks of an answer schema whose time ajv lets grow faster than the answer, done in time linear in
// it (specs/record.md, "The answer"): the answer is the agent's to choose, and its check runs inside the
// record writer. Given to ajv by src/infra/answer-validator.ts.

/**
 * ajv's RegExpEngine (its `code.regExp` option) over RE2 (re2js, pure JavaScript), for `pattern` and
 * `patternProperties`: ECMAScript's backtracking engine takes time exponential in the text for a pattern
 * such as ^(a+)+$; RE2's is linear. A pattern is a search (unanchored), as JSON Schema means it. RE2 has
 * no lookaround and no backreferences: a pattern that uses them throws at compile, with the pattern and
 * the reason, and the schema is refused at admission.
 */
export const linearRegExp = Object.assign(
  (pattern: string, _flags: string) => {
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(pattern);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new Error(
        `pattern ${JSON.stringify(pattern)} is not supported: catherd matches patterns with RE2, in time linear in the answer (no lookaround, no backreferences): ${why}`,
      );
    }
    // ajv keys its compiled patterns by toString(): one key per pattern.
    return { test: (text: string) => compiled.test(text), toString: () => `re2:${pattern}` };
  },
  { code: "catherd-re2" },
);

interface UniqueItemsCheck {
  (schema: boolean, data: unknown[]): boolean;
  errors?: { keyword: string; message: string; params: { i: number; j: number } }[];
}

/**
 * `uniqueItems`: each item's canonical text (object keys sorted) in one map, instead of ajv's comparison
 * of every pair (7 s for an array of 20,000 small arrays). Equal as ajv's deep equality is: JSON values
 * alike, whatever the order of an object's keys. The answer's depth is bounded before it is checked
 * (src/domain/ending/answer-contract.ts), so the walk's recursion is too.
 */
const uniqueItems: UniqueItemsCheck = (schema, data) => {
  uniqueItems.errors = [];
  if (!schema) return true;
  const seen = new Map<string, number>();
  for (const [i, item] of data.entries()) {
    const key = canonical(item);
    const j = seen.get(key);
    if (j !== undefined) {
      const message = `must NOT have duplicate items (items ## ${j} and ${i} are identical)`;
      uniqueItems.errors = [{ keyword: "uniqueItems", message, params: { i, j } }];
      return false;
    }
    seen.set(key, i);
  }
  return true;
};

/** The definition ajv's addKeyword takes, in place of its own uniqueItems. */
export const linearUniqueItems = {
  keyword: "uniqueItems",
  type: "array",
  schemaType: "boolean",
  errors: true,
  validate: uniqueItems,
};

/** A JSON value's text with each object's keys in order: equal values, equal texts. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(object[k])}`).join(",")}}`;
}
