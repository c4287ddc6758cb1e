import type { ErrorCode } from "./vocab.js";

/** The one user-facing error: a code from the closed set, a message naming the thing, and a fix to run. */
export class CatherdError extends Error {
  readonly code: ErrorCode;
  readonly fix: string | undefined;

  constructor(code: ErrorCode, message: string, options: { fix?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CatherdError";
    this.code = code;
    this.fix = options.fix;
  }

  toJSON(): { code: ErrorCode; message: string; fix: string | null } {
    return { code: this.code, message: this.message, fix: this.fix ?? null };
  }
}

/** The process exit status for an error code (design.md §6): 2 usage, 3 not ready, 130 interrupted, else 1. */
export function exitCodeFor(code: ErrorCode): number {
  switch (code) {
    case "E_INPUT_INVALID":
      return 2;
    case "E_BACKEND_MISSING":
    case "E_BACKEND_BROKEN":
    case "E_BACKEND_TOO_OLD":
      return 3;
    case "E_INTERRUPTED":
      return 130;
    default:
      return 1;
  }
}

/** Narrowing helper for catch clauses. */
export function isCatherdError(value: unknown): value is CatherdError {
  return value instanceof CatherdError;
}
