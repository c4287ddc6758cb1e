import { z } from "zod";
import { checked } from "../../domain/checked.js";
import { CatherdError } from "../../domain/errors.js";
import { ID_PATTERN } from "../../domain/ids.js";

// The words and shapes the request's concerns share: how a refusal names a flag and quotes its value,
// and the rules of a name and of a one-line text.

/** The rule of names and runs (specs/dispatch.md §1). */
export const ID_RULE =
  "a name is 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit, and never ..";

/** A name or a run's name. */
export const idText = z
  .string()
  .regex(ID_PATTERN)
  .refine((v) => !v.includes(".."), "must not contain ..");

/** One line of 1-200 characters without NUL: a model, an effort, a thread id. */
export const oneLine = z
  .string()
  .min(1)
  .max(200)
  .refine((v) => !/[\0\n\r]/.test(v), "must be one line without NUL");

/** E_INPUT_INVALID about `field`: `--name "a/b" is not …`. */
export function invalid(field: string, message: string, fix: string): CatherdError {
  return new CatherdError("E_INPUT_INVALID", `${field} ${message}`, { fix });
}

/** How a value's refusal reads: the flag, the rule it broke, the fix. */
export interface Refusal {
  field: string;
  rule: string;
  fix: string;
}

/**
 * The value when `schema` takes it, else E_INPUT_INVALID stating the rule it broke, in catherd's words
 * (the schema library's own are for programmers): `--name "a/b" is not a name: <rule>`.
 */
export function check<T>(schema: z.ZodType<T>, value: unknown, { field, rule, fix }: Refusal): T {
  return checked(schema, value, () => invalid(field, `${shownValue(value)}: ${rule}`, fix));
}

/** A value as an error quotes it: short, one line. */
export function shownValue(value: unknown): string {
  const text = String(value);
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
