import { CatherdError } from "./errors.js";

/** Run names, dispatch names and dispatch ids (specs/dispatch.md §1). Never `..`, never a path separator. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function isValidId(value: string): boolean {
  return ID_PATTERN.test(value) && !value.includes("..");
}

/** Returns the id, or throws E_INPUT_INVALID naming the field. */
export function requireId(field: string, value: string): string {
  if (!isValidId(value)) {
    const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
    throw new CatherdError("E_INPUT_INVALID", `${field} ${shown} is not a valid id`, {
      fix: `use 1-64 characters of A-Z a-z 0-9 . _ - starting with a letter or digit, without "..", for ${field}`,
    });
  }
  return value;
}

const ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * A dispatch id that sorts by creation time: `20261129T081530Z-k3x9qa`. The random suffix (36^6) keeps
 * ids unique under concurrent admission; admission additionally creates the folder exclusively.
 */
export function makeDispatchId(at: Date, random: () => number): string {
  const stamp = at
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  return `${stamp}-${randomSuffix(random)}`;
}

/** Six random characters of 0-9 a-z (36^6): what keeps ids made in the same moment apart. */
export function randomSuffix(random: () => number): string {
  let suffix = "";
  for (let i = 0; i < 6; i++) suffix += ID_ALPHABET[Math.floor(random() * ID_ALPHABET.length)] ?? "0";
  return suffix;
}
