import { asCatherdError, stackOf } from "../src/domain/errors.js";
import { appendLine } from "../src/infra/atomic.js";

/** supervisor.log: one JSON line per notable event, best effort (a full disk never stops supervision). */
export type SupervisorLog = (event: string, fields?: Record<string, unknown>) => void;

export function fileLog(file: string, wallNow: () => Date): SupervisorLog {
  return (event, fields = {}) =>
    appendLine(file, JSON.stringify({ at: wallNow().toISOString(), event, ...fields }));
}

/** A failure as a log line's fields: its message, and the stack of a throw that is a bug (E_INTERNAL). */
export function failure(error: unknown): { message: string; stack?: string | null } {
  const known = asCatherdError(error);
  return known.code === "E_INTERNAL"
    ? { message: known.message, stack: stackOf(error) }
    : { message: known.message };
}
