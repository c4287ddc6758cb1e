// What catherd prints of an agent's own bytes (its stderr, its events, what it says it is doing) reaches a
// person's terminal: it must not be able to drive it. The one function below makes such text inert; every
// printer of agent text and every cut of it (a table cell, a one-line excerpt, a record's tail) goes
// through it, and cuts after it, so that no escape sequence is ever printed whole or half.

const ESC = "\u001b";

/**
 * The escape sequences of ECMA-48 and xterm, 7-bit (ESC + …) and 8-bit (a C1 character), each matched
 * whole, in this order:
 * - a control string — OSC (ESC ] or U+009D: a title, a hyperlink, the clipboard), DCS (ESC P, U+0090),
 *   SOS (ESC X, U+0098), PM (ESC ^, U+009E), APC (ESC _, U+009F) — up to its BEL or ST (ESC \ or
 *   U+009C);
 * - a CSI (ESC [ or U+009B: colours, cursor moves, clearing the screen) with its parameters,
 *   intermediates and final byte;
 * - any other ESC sequence: ESC, intermediates (0x20-0x2F), one final character (0x30-0x7E), as ESC c
 *   (reset), ESC 7 (save the cursor), ESC ( B (a character set).
 * A control string without its terminator is not matched: its introducer is then removed as a two
 * character sequence and its payload stays, visible, as text.
 */
const SEQUENCE = new RegExp(
  [
    `(?:${ESC}[P\\]X^_]|[\\u0090\\u0098\\u009d\\u009e\\u009f])[^\\u0007\\u001b\\u009c]*(?:\\u0007|${ESC}\\\\|\\u009c)`,
    `(?:${ESC}\\[|\\u009b)[0-?]*[ -/]*[@-~]`,
    `${ESC}[ -/]*[0-~]`,
  ].join("|"),
  "g",
);

/**
 * A control character that no sequence claimed: C0 but tab, newline and a carriage return ending a line
 * (CRLF: harmless, and common in a reply), DEL, C1.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\r(?!\n)/g;
/** Any character that makes text need work: most texts have none, and testing is cheaper than replacing. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const NEEDS_WORK = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** What a stray control character is shown as: visible, and as what invalid UTF-8 already reads as. */
export const SHOWN_CONTROL = "\ufffd";

/**
 * `text` made inert for a terminal: every escape sequence removed whole (see SEQUENCE), then every control
 * character left (a lone ESC, BEL, backspace, a carriage return that does not end a line, C1) shown as
 * U+FFFD. Tab, newline and CRLF stay: they only move the cursor on, and a one-line view folds them as white
 * space. The result holds no other character a terminal acts on; it is as long as `text` or shorter.
 */
export function inertText(text: string): string {
  if (!NEEDS_WORK.test(text)) return text;
  return text.replace(SEQUENCE, "").replace(CONTROL, SHOWN_CONTROL);
}

/**
 * The start of `text` that is at most `max` UTF-16 units long without splitting a character in two (a
 * surrogate pair cut in half prints as U+FFFD). For text already made inert: cutting never splits a
 * sequence because there is none left.
 */
export function cutChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = Math.max(0, max);
  const last = text.charCodeAt(end - 1);
  // A high surrogate as the last unit kept: its pair would be cut off, so it goes too.
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? end - 1 : end);
}
