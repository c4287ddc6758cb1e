// Text that leaves the agent's own files for a record or a screen: made inert for a terminal
// (inert-text.ts), secrets redacted, length capped. Error messages echo what was sent (a key in a URL, a
// bearer token in a header).

import { isSecretName } from "../env.js";
import { cutChars, inertText } from "./inert-text.js";

/** The longest error message a record keeps. */
export const MAX_MESSAGE_CHARS = 2_000;

const REDACTED = "[redacted]";

/**
 * Secret shapes, each replaced by `[redacted]` (a named value keeps its name). Ordered: a `Bearer` token
 * first, then values named as secrets (`api_key=…`, `"x-api-key": "…"`, `?key=…`), then the shapes of
 * well-known keys wherever they appear.
 */
const SECRETS: readonly [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  [
    /\b((?:x-(?:goog-)?)?api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|id[_-]?token|session[_-]?token|client[_-]?secret|private[_-]?key|secret|password|passwd|authorization|token)(["']?\s*[:=]\s*["']?)(?!Bearer\b|Basic\b|\[redacted\])([^\s"',;&)]{4,})/gi,
    `$1$2${REDACTED}`,
  ],
  [/([?&](?:key|api_key|apikey|access_token|token|sig|signature)=)[^&\s"']+/gi, `$1${REDACTED}`],
  [/\bsk-[A-Za-z0-9_*-]{8,}/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{20,}/g, REDACTED],
  [/\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}/g, REDACTED],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, REDACTED],
];

/** The text with every secret shape replaced by `[redacted]`. */
export function redact(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRETS) out = out.replace(pattern, replacement);
  return out;
}

/**
 * An environment (spec.json's `env`) as `show` and the dashboard print it: the value of a variable named
 * like a secret (`isSecretName`) hidden whole, and in every other value the secret shapes above redacted —
 * a name cannot tell every secret (`--env BASE_URL=https://…?key=…`).
 */
export function redactEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => [name, isSecretName(name) ? REDACTED : redact(value)]),
  );
}

/** A message fit for a record: inert for a terminal, no secrets, trimmed, at most `max` characters. */
export function cleanMessage(text: string, max = MAX_MESSAGE_CHARS): string {
  // Cut before redacting (a stream's line can be megabytes), with room for a secret cut in half.
  const head = text.length > max * 2 ? text.slice(0, max * 2) : text;
  const clean = redact(inertText(head)).trim();
  return clean.length > max ? `${cutChars(clean, max - 1)}…` : clean;
}

/** The stderr lines a record keeps: the last 20 non-empty ones, at most 4 KiB in all. */
export const TAIL_LINES = 20;
export const TAIL_BYTES = 4 * 1024;

const utf8 = new TextEncoder();

/**
 * The tail a record keeps of stderr.log (specs/record.md): the last TAIL_LINES non-empty lines, each
 * inert for a terminal and with secrets redacted, the oldest dropped (and a last single line cut) until they
 * fit in TAIL_BYTES of UTF-8, a newline counted after each. A line is made inert after a rough cut for size
 * and before the exact one: no part of an escape sequence is kept.
 */
export function recordTail(lines: readonly string[]): string[] {
  const kept = lines
    .map((line) =>
      redact(inertText(line.length > TAIL_BYTES * 2 ? line.slice(0, TAIL_BYTES * 2) : line)).trimEnd(),
    )
    .filter((line) => line.trim() !== "")
    .slice(-TAIL_LINES);
  const size = (line: string) => utf8.encode(line).length + 1;
  let total = kept.reduce((sum, line) => sum + size(line), 0);
  while (kept.length > 1 && total > TAIL_BYTES) total -= size(kept.shift() ?? "");
  const only = kept[0];
  if (kept.length === 1 && only !== undefined && total > TAIL_BYTES)
    kept[0] = cutToBytes(only, TAIL_BYTES - 4);
  return kept;
}

/** The longest start of `text` (whole code points) that fits in `max` bytes of UTF-8, then "…". */
function cutToBytes(text: string, max: number): string {
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    bytes += utf8.encode(char).length;
    if (bytes > max) break;
    end += char.length;
  }
  return `${text.slice(0, end)}…`;
}
