// What `--json` prints: JSON, inert on a terminal as the text output is (specs/cli.md, "Commands").

/** A C1 control character: JSON.stringify writes it as it is (it escapes only C0, quote and backslash). */
const C1 = /[\u0080-\u009f]/g;

/**
 * `value` as one JSON text, C1 controls written as `\u0080`…`\u009f` escapes: the same value to any JSON
 * reader, and nothing for a terminal that reads them as controls (an 8-bit CSI) to act on. They can only
 * stand inside strings, where an escape means the same character.
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value).replace(C1, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
