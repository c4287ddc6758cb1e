import { asCatherdError, exitCodeFor, stackOf } from "../domain/errors.js";

// The one error printer, shared by the CLI and the supervisor program (specs/cli.md, "Errors").

/**
 * Prints an error once — as text on stderr, or with `json` as `{"error": {code, message, fix}}` on stdout
 * (plus `stack` for E_INTERNAL) — and returns the exit code for it. Any throw that is not a CatherdError
 * is E_INTERNAL; CATHERD_DEBUG=1 adds its stack to the text.
 */
export function reportError(error: unknown, json: boolean): number {
  const known = asCatherdError(error);
  if (json) {
    process.stdout.write(`${JSON.stringify({ error: known.toJSON() })}\n`);
  } else {
    // One line each, whatever the message holds (node's own parse errors span three).
    const line = (text: string) => text.replace(/\s*\n\s*/g, " ");
    process.stderr.write(`error ${known.code}: ${line(known.message)}\n`);
    if (known.fix !== undefined) process.stderr.write(`fix: ${line(known.fix)}\n`);
    const stack = known.code === "E_INTERNAL" ? stackOf(known.cause) : null;
    if (stack !== null && process.env.CATHERD_DEBUG !== undefined) process.stderr.write(`${stack}\n`);
  }
  return exitCodeFor(known.code);
}
