import { cutChars, inertText } from "../text/inert-text.js";

// The declared outcome (specs/record.md, "outcome"): the worker's own word on how its work ended, read
// from its final message when the dispatch was given `--outcome`. Beside catherd's verdict, never in its
// place: the record's `status` says what the process did, this says what the worker says it did.
// Pure: the record writer calls `declaredOutcome(reply)`; nothing here guesses from prose.

/** What a worker may declare, as the contract appended to its brief lists them. */
export const DECLARED_STATUSES = ["complete", "partial", "blocked", "refused"] as const;
export type DeclaredStatus = (typeof DECLARED_STATUSES)[number];

/** record.json's `outcome`: the declared status and the worker's reason ("" when it gave none). */
export interface DeclaredOutcome {
  status: DeclaredStatus;
  why: string;
}

/** The longest `why` kept: a reason is one line; a worker that writes a page has the reply for it. */
export const MAX_WHY_CHARS = 500;

/**
 * One outcome line (the grammar in specs/record.md): `STATUS: <status> <separator> <why>`, the word STATUS
 * and the status in any case, the separator an em dash, an en dash, `-`, `--` or `:`, the why optional.
 * Markdown around it is allowed: a quote (`>`), a list marker (`-`, `*`, `+`, `1.`), a heading (`#`), and
 * emphasis or code marks (`**STATUS:** complete — …`, `` `STATUS: blocked - …` ``). A status followed by
 * anything but a separator (`complete | partial …`, the contract's own template) is no outcome line.
 */
const LINE =
  /^(?:>\s*)*(?:(?:[-*+]|\d{1,3}[.)])\s+)?(?:#{1,6}\s+)?(?<open>[*_`]*)\s*status\s*[*_`]*\s*:\s*[*_`]*\s*(?<status>complete|partial|blocked|refused)(?<close>[*_`]*)\.?\s*(?:(?:—|–|--?|:)(?<why>.*))?$/i;

/** The outcome of one line, or null when the line is not an outcome line. */
export function outcomeOfLine(line: string): DeclaredOutcome | null {
  const match = LINE.exec(line.trim());
  if (match?.groups === undefined) return null;
  const { open = "", close = "", status = "", why = "" } = match.groups;
  return { status: status.toLowerCase() as DeclaredStatus, why: cleanWhy(why, open, close) };
}

/**
 * The outcome a final message declares: its last outcome line (a worker that corrected itself meant the
 * later one), wherever it is — first line, last line, inside a code fence. Null when there is none.
 */
export function declaredOutcome(reply: string | null): DeclaredOutcome | null {
  if (reply === null) return null;
  const lines = reply.split(/\r?\n|\r/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const found = outcomeOfLine(lines[i] ?? "");
    if (found !== null) return found;
  }
  return null;
}

/**
 * The why without the emphasis that closes what opened before STATUS (`**STATUS: blocked — no key**`),
 * inert (no escape sequence, no control character: it goes into a terminal and a notification's
 * environment, which takes no NUL) and at most MAX_WHY_CHARS long.
 */
function cleanWhy(why: string, open: string, close: string): string {
  let text = inertText(why).trim();
  const closer = [...open].reverse().join("");
  if (open !== "" && close === "" && text.endsWith(closer)) text = text.slice(0, -closer.length).trim();
  return text.length > MAX_WHY_CHARS ? `${cutChars(text, MAX_WHY_CHARS - 1)}…` : text;
}

/** The outcome as one line says it: "blocked — no API key for the staging database", "complete". */
export function outcomeText(outcome: DeclaredOutcome): string {
  return outcome.why === "" ? outcome.status : `${outcome.status} — ${outcome.why}`;
}
