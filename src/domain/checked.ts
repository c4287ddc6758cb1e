import type { z } from "zod";
import type { CatherdError } from "./errors.js";

// The one zod check of what comes from outside catherd — a flag, an MCP argument, a file on disk: the
// value when its schema takes it, else the CatherdError its caller words in catherd's terms (zod's own
// messages are for programmers).

/** `value` as `schema` takes it; else throws `refuse(issue)`, `issue` the first rule it broke. */
export function checked<S extends z.ZodTypeAny>(
  schema: S,
  value: unknown,
  refuse: (issue: z.ZodIssue | undefined) => CatherdError,
): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw refuse(parsed.error.issues[0]);
  return parsed.data;
}
