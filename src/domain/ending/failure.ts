import type { ErrorKind, Status } from "../vocab.js";

// Why a dispatch did not end well (specs/record.md): the kind, the most specific words, and when to come back.

/** The status each kind gives a record: what will heal by waiting is `limit`, a refusal is `failed`. */
const STATUS_OF_KIND: Readonly<Record<ErrorKind, Status>> = {
  auth: "failed",
  quota: "limit",
  "rate-limit": "limit",
  "provider-down": "limit",
  model: "failed",
  context: "failed",
  request: "failed",
  resume: "failed",
  cli: "failed",
  timeout: "timeout",
  cancelled: "cancelled",
  spawn: "failed",
  supervisor: "failed",
  lost: "lost",
  oom: "failed",
  // A cap on spending: it will not heal by waiting, and more money (a higher cap) is the fix.
  budget: "limit",
  // Freeing space is the fix, and nothing the dispatch could do about it: a failure, not a wait.
  disk: "failed",
  "answer-invalid": "failed",
  "answer-over-limit": "failed",
  // catherd's own error while it built the record: nothing the dispatch did, and nothing waiting heals.
  record: "failed",
  // A red check: the work is not done; a check that could not judge: nothing says it is.
  verify: "failed",
  "verify-error": "failed",
};

export function statusOfKind(kind: ErrorKind): Status {
  return STATUS_OF_KIND[kind];
}

/** The kinds a provider retry can end a dispatch with at once: waiting will not fix them. */
export const REFUSAL_KINDS: ReadonlySet<ErrorKind> = new Set(["auth", "quota"]);

/**
 * When the provider or the CLI said to come back: a time (`atMs`, ms since the epoch), or a delay counted
 * from the time of the line that said it (`fromMs`; null when the line carries no time of its own, and
 * the end of the dispatch stands in for it).
 */
export type RetryAfter = { atMs: number } | { delayMs: number; fromMs: number | null };

/** A failure one line reports, as the backend read it. */
export interface ErrorFact {
  /** The words as printed (secrets not yet redacted: the record redacts). */
  message: string;
  /** The kind this line proves, or null when it proves none. */
  kind: ErrorKind | null;
  /** The HTTP status the line names, if any. */
  status: number | null;
  /** Whose words `message` holds: the provider's (the most specific), or the CLI's own. */
  words: "provider" | "cli";
  retryAfter: RetryAfter | null;
}

/** A provider retry: the CLI is waiting on its model provider, not working. */
export interface RetryFact {
  attempt: number | null;
  max: number | null;
  message: string;
  status: number | null;
  /** What the retried failure says: `rate-limit`, `provider-down`, or a refusal such as `auth`. */
  kind: ErrorKind;
}

/** The verdict's account of a dispatch that did not end `ok` (record.json's error, with its code). */
export interface Failure {
  kind: ErrorKind;
  /** Redacted, at most MAX_MESSAGE_CHARS characters. */
  message: string;
  /** ISO time to come back, or null. */
  retryAfter: string | null;
}

/** The time a RetryAfter names, given when the dispatch ended; null when it cannot be placed. */
export function retryAfterTime(retryAfter: RetryAfter | null, endedAtMs: number | null): string | null {
  if (retryAfter === null) return null;
  const at =
    "atMs" in retryAfter
      ? retryAfter.atMs
      : (retryAfter.fromMs ?? endedAtMs ?? Number.NaN) + retryAfter.delayMs;
  const date = new Date(at);
  return Number.isFinite(at) && !Number.isNaN(date.getTime()) ? date.toISOString() : null;
}
