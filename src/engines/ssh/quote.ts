import { CatherdError } from "../../domain/errors.js";

// The one quoting of the SSH engine (specs/placement.md, "SSH"): every word catherd puts into a command a
// remote shell reads — a folder, catherd's home, a variable's value — goes through shellQuote. ssh joins
// its command words with spaces and hands the line to the remote user's shell, so nothing is safe there
// unquoted. Pure.

/**
 * `word` as one word of a POSIX shell, whatever it holds: in single quotes, inside which nothing is special,
 * each `'` written `'\''` (close, an escaped quote, open again). A NUL cannot travel in a shell word and is
 * refused (E_INPUT_INVALID).
 */
export function shellQuote(word: string): string {
  if (word.includes("\0")) {
    throw new CatherdError("E_INPUT_INVALID", "a value for the remote shell holds a NUL character", {
      fix: "remove the NUL from the value (a path, a variable given with --pass-env)",
    });
  }
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/** `NAME=value; export NAME`, the value quoted: a variable set for the remote script and what it starts. */
export function exportLine(name: string, value: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `${JSON.stringify(name.slice(0, 80))} is not a variable's name`,
      {
        fix: "name variables with letters, digits and _",
      },
    );
  }
  return `${name}=${shellQuote(value)}; export ${name}`;
}
