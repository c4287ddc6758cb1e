// Text that leaves the agent's own files for a record or a screen: terminal colours removed, secrets
// redacted, length capped. Error messages echo what was sent (a key in a URL, a bearer token in a header).

/** The longest error message a record keeps. */
export const MAX_MESSAGE_CHARS = 2_000;

const REDACTED = "[redacted]";

const ESC = "\u001b";
/** ANSI escape sequences (colours, cursor moves) as CLIs print them even with NO_COLOR. */
const ANSI = new RegExp(`${ESC}\\[[0-?]*[ -/]*[@-~]|${ESC}[@-Z\\\\-_]`, "g");

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

export function stripAnsi(text: string): string {
  return text.includes(ESC) ? text.replace(ANSI, "") : text;
}

/** The text with every secret shape replaced by `[redacted]`. */
export function redact(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRETS) out = out.replace(pattern, replacement);
  return out;
}

/** A message fit for a record: no colours, no secrets, trimmed, at most `max` characters. */
export function cleanMessage(text: string, max = MAX_MESSAGE_CHARS): string {
  // Cut before redacting (a stream's line can be megabytes), with room for a secret cut in half.
  const head = text.length > max * 2 ? text.slice(0, max * 2) : text;
  const clean = redact(stripAnsi(head)).trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}
