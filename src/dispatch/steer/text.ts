import { CatherdError } from "../../domain/errors.js";

/**
 * A text a person gives an agent (a message, an answer, its why): not blank, at most `maxBytes`, no NUL;
 * else E_INPUT_INVALID naming `what`.
 */
export function checkedText(what: string, text: string, maxBytes: number): string {
  const fix = `give ${what} as 1 to ${maxBytes} bytes of text`;
  if (text.trim() === "") throw new CatherdError("E_INPUT_INVALID", `${what} is empty`, { fix });
  if (Buffer.byteLength(text) > maxBytes) {
    throw new CatherdError("E_INPUT_INVALID", `${what} is over ${maxBytes} bytes`, { fix });
  }
  if (text.includes("\0")) throw new CatherdError("E_INPUT_INVALID", `${what} holds a NUL byte`, { fix });
  return text;
}
