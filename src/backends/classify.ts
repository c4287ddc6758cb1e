import type { ErrorFact, RetryAfter } from "../domain/ending/failure.js";
import type { ErrorKind } from "../domain/vocab.js";
import { asRecord, asString, parseObject } from "./line-parsing.js";

// What a provider's or a CLI's failure says, from the evidence the CLIs print: an HTTP status, the
// provider's error codes and types, and its words. The table of specs/backends.md names, for each CLI,
// which line gives which evidence and the recorded failure it comes from.

/**
 * Provider and CLI codes that name one kind (OpenAI `error.code`/`type`, Anthropic `error.type`, Google
 * `status` and ErrorInfo `reason`, Claude Code's `error` category and `terminal_reason`, opencode's
 * `error.name`). A code says more than a status or words.
 */
const SPECIFIC_CODES: Readonly<Record<string, ErrorKind>> = {
  invalid_api_key: "auth",
  authentication_error: "auth",
  authentication_failed: "auth",
  permission_error: "auth",
  UNAUTHENTICATED: "auth",
  PERMISSION_DENIED: "auth",
  API_KEY_INVALID: "auth",
  ACCESS_TOKEN_EXPIRED: "auth",
  insufficient_quota: "quota",
  billing_error: "quota",
  // Google's ErrorInfo reasons of a spent quota (gemini's TerminalQuotaError).
  INSUFFICIENT_G1_CREDITS_BALANCE: "quota",
  QUOTA_EXHAUSTED: "quota",
  // codex's usage-limit 429 body (`error.type`) and its rollout's codex_error_info.
  usage_limit_reached: "quota",
  usage_limit_exceeded: "quota",
  rate_limit_exceeded: "rate-limit",
  rate_limit_error: "rate-limit",
  rate_limit: "rate-limit",
  model_not_found: "model",
  ModelNotFoundError: "model",
  context_length_exceeded: "context",
  prompt_too_long: "context",
  ContextOverflowError: "context",
  overloaded_error: "provider-down",
  overloaded: "provider-down",
  server_error: "provider-down",
  UNAVAILABLE: "provider-down",
  DEADLINE_EXCEEDED: "provider-down",
  unsupported_parameter: "request",
  // Claude Code's result subtype when its own --max-budget-usd stopped it.
  error_max_budget_usd: "budget",
  // codex app-server's `codexErrorInfo` (its typed errors; the HTTP status forms carry a status instead).
  contextWindowExceeded: "context",
  usageLimitExceeded: "quota",
  rateLimitExceeded: "rate-limit",
  modelNotFound: "model",
  unauthorized: "auth",
  serverOverloaded: "provider-down",
  internalServerError: "provider-down",
  badRequest: "request",
};

/**
 * Codes that only narrow it down (Google's RESOURCE_EXHAUSTED is both a rate limit and a spent quota;
 * INVALID_ARGUMENT is also a prompt that is too long): they count after the words.
 */
const GENERIC_CODES: Readonly<Record<string, ErrorKind>> = {
  RESOURCE_EXHAUSTED: "rate-limit",
  NOT_FOUND: "model",
  not_found_error: "model",
  INTERNAL: "provider-down",
  api_error: "provider-down",
  invalid_request_error: "request",
  invalid_request: "request",
  INVALID_ARGUMENT: "request",
  FAILED_PRECONDITION: "request",
};

/** Words that name a kind, in the order they are tried (a context overflow also says "tokens"…). */
const WORDING: readonly [ErrorKind, RegExp][] = [
  [
    "context",
    /context[_ ]length[_ ]exceeded|context window|maximum context length|prompt is too long|input token count[^.]*exceeds|too many (?:input )?tokens|context[_ ]overflow|reduce the length of the messages/i,
  ],
  [
    "quota",
    /insufficient[_ ]quota|quota exceeded|exceeded (?:your |the )?(?:current |daily |monthly )?quota|exhausted (?:your|the) (?:\w+ )?quota|credit balance|billing|out of (?:[\w-]+ ){0,4}credits|usage limit|spending limit|spend limit|you['’]ve hit your (?:[\w-]+ ){0,3}limit/i,
  ],
  [
    "auth",
    /invalid[_ ]api[_ ]key|incorrect api key|api key not valid|invalid x-api-key|authenticat|unauthori[sz]ed|permission[_ ]denied|not allowed to|does not have permission|(?:access )?token (?:has )?expired|not logged in|please (?:run )?\/login|forbidden/i,
  ],
  [
    "model",
    /\bmodels?\b[^\n]{0,120}?(?:does not exist|is not found|not found for|is not supported|is not available)|model_not_found|issue with the selected model|unknown model|invalid model|no such model/i,
  ],
  [
    "rate-limit",
    /\b429\b|rate[ _-]?limit|too many requests|resource[ _]exhausted|resource has been exhausted/i,
  ],
  [
    "provider-down",
    /overloaded|high demand|server[_ -]error|internal (?:server )?error|service unavailable|temporarily unavailable|bad gateway|gateway timeout|fetch failed|socket hang up|ECONNRESET|ECONNREFUSED/i,
  ],
  [
    "resume",
    /no conversation found|session not found|no rollout found|error resuming session|no previous sessions|invalid session identifier/i,
  ],
];

/** The kind the words name, or null. */
export function kindOfWords(text: string): ErrorKind | null {
  for (const [kind, pattern] of WORDING) if (pattern.test(text)) return kind;
  return null;
}

/** The evidence about one failure that a CLI printed. */
export interface Evidence {
  /** The HTTP status, when the line names one. */
  status?: number | null;
  /** Provider or CLI codes, most specific first (unknown ones are ignored). */
  codes?: readonly (string | null | undefined)[];
  /** The words: the provider's message, the CLI's error line. */
  text: string;
}

/**
 * The kind a failure proves, or null: a specific code first; then a status that alone decides (401/403
 * auth, 413 context, 429 rate-limit unless the words say quota, 5xx provider-down); then the words; then
 * a generic code; then 404 (the model endpoint: model) and other 4xx (request).
 */
export function classify(evidence: Evidence): ErrorKind | null {
  const codes = (evidence.codes ?? []).filter((c): c is string => typeof c === "string" && c !== "");
  for (const code of codes) {
    const kind = SPECIFIC_CODES[code];
    if (kind !== undefined) return kind;
  }
  const status = evidence.status ?? null;
  const words = kindOfWords(evidence.text);
  if (status === 401 || status === 403) return "auth";
  if (status === 413) return "context";
  if (status === 429) return words === "quota" ? "quota" : "rate-limit";
  if (status !== null && status >= 500 && status <= 599) return "provider-down";
  if (words !== null) return words;
  for (const code of codes) {
    const kind = GENERIC_CODES[code];
    if (kind !== undefined) return kind;
  }
  if (status === 404) return "model";
  if (status !== null && status >= 400 && status <= 499) return "request";
  return null;
}

/** A JSON value as an HTTP status: an integer from 100 to 599, else null (a CLI's field may hold anything). */
export function httpStatus(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 100 && value <= 599 ? value : null;
}

/** An HTTP status named in a CLI's text: "unexpected status 401", "last status: 429", "API Error: 400", "(429)". */
export function statusInText(text: string): number | null {
  const m =
    /\b(?:status(?: code)?:?|HTTP(?:\/[\d.]+)?|API Error:)\s*([1-5]\d\d)\b/i.exec(text) ??
    /\((4\d\d|5\d\d)\)/.exec(text);
  return m?.[1] === undefined ? null : Number(m[1]);
}

/** Milliseconds of a unit the duration pattern accepts (ms, d…, h…, m…, s…). */
function unitMs(unit: string): number {
  const u = unit.toLowerCase();
  if (u === "ms") return 1;
  if (u.startsWith("d")) return 86_400_000;
  if (u.startsWith("h")) return 3_600_000;
  if (u.startsWith("m")) return 60_000;
  return 1_000;
}

/** "1h0m0s", "3600s", "2 days 3 hours 5 minutes", "90 seconds" → milliseconds; null when it is not one. */
export function durationInText(text: string): number | null {
  const parts = [
    ...text.matchAll(
      /(\d+(?:\.\d+)?)\s*(ms|d(?:ays?)?|h(?:ours?|rs?)?|m(?:in(?:ute)?s?)?|s(?:ec(?:ond)?s?)?)(?![a-z])/gi,
    ),
  ];
  if (parts.length === 0) return null;
  let total = 0;
  for (const [, amount, unit] of parts) total += Number(amount) * unitMs(unit ?? "s");
  return Math.round(total);
}

const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})/;
/** "try again in 1h0m0s", "retry in 3600s", "retry after 3600s", "Retry-After: 3600". */
const DELAY = /(?:try again|retry|retrying)\s+(?:in|after)\s+((?:\d+(?:\.\d+)?\s*[a-z]+[\s,]*(?:and\s+)?)+)/i;
const RETRY_AFTER_HEADER = /retry-after["']?\s*[:=]\s*["']?(\d+)\b/i;
/** "resets at 2026-11-30T16:18:40Z", "try again at …", "reset: …" with an ISO time. */
const RESET_AT = new RegExp(`(?:resets?|try again|retry)\\s*(?:at|on|:)?\\s*(${ISO_TIME.source})`, "i");

/**
 * When a message says to come back: an ISO time it names, or a delay it names counted from `fromMs` (the
 * line's own time, or null). Null when it names neither.
 */
export function retryAfterInText(text: string, fromMs: number | null): RetryAfter | null {
  const reset = RESET_AT.exec(text);
  if (reset?.[1] !== undefined) {
    const atMs = Date.parse(reset[1]);
    if (Number.isFinite(atMs)) return { atMs };
  }
  const delay = DELAY.exec(text);
  const delayMs = delay?.[1] === undefined ? null : durationInText(delay[1]);
  if (delayMs !== null) return { delayMs, fromMs };
  const header = RETRY_AFTER_HEADER.exec(text);
  if (header?.[1] !== undefined) return { delayMs: Number(header[1]) * 1000, fromMs };
  return null;
}

/** A provider's JSON error body (`{"error":{…}}` of OpenAI, Anthropic and Google), as codes, status and words. */
export interface ProviderBody {
  message: string;
  status: number | null;
  codes: string[];
}

/** Reads a provider's error body out of a JSON text; null when the text is not one. */
export function providerBody(text: string): ProviderBody | null {
  const body = parseObject(text);
  const error = asRecord(body?.error);
  if (error === null) return null;
  const message = asString(error.message);
  if (message === null) return null;
  const details = Array.isArray(error.details) ? error.details.map(asRecord) : [];
  const reasons = details.map((d) => asString(d?.reason));
  const codes = [asString(error.code), ...reasons, asString(error.type), asString(error.status)].filter(
    (c): c is string => c !== null,
  );
  return { message, status: httpStatus(error.code), codes };
}

/** An error fact from its parts, the kind classified from the same evidence. */
export function errorFact(
  evidence: Evidence & { words?: "provider" | "cli"; kind?: ErrorKind | null; fromMs?: number | null },
): ErrorFact {
  return {
    message: evidence.text,
    kind: evidence.kind !== undefined ? evidence.kind : classify(evidence),
    status: evidence.status ?? null,
    words: evidence.words ?? "cli",
    retryAfter: retryAfterInText(evidence.text, evidence.fromMs ?? null),
  };
}

/** The kind a provider retry implies: what its evidence proves, else the provider being down. */
export function retryKind(evidence: Evidence): ErrorKind {
  return classify(evidence) ?? "provider-down";
}
