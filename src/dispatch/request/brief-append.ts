// What catherd adds to a brief when asked (--lock-hint, --outcome, an answer contract): after the brief's
// own bytes, untouched, a blank line and the text. brief.md is otherwise the orchestrator's brief, byte
// for byte.

/** `brief`, then a blank line, then `text` (which ends with its own newline). */
export function appendToBrief(brief: Buffer, text: string): Buffer {
  const gap = brief.at(-1) === 0x0a ? "\n" : "\n\n";
  return Buffer.concat([brief, Buffer.from(`${gap}${text}`, "utf8")]);
}
