// @ts-check
// Small waits and reads for the sections.
import * as fs from "node:fs";

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` every `everyMs` until it returns a truthy value or `timeoutMs` passes (then null).
 * @template T
 * @param {() => T} check
 * @param {number} timeoutMs
 * @param {number} [everyMs]
 * @returns {Promise<T | null>}
 */
export async function waitFor(check, timeoutMs, everyMs = 5) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (performance.now() > deadline) return null;
    await sleep(everyMs);
  }
}

/** @param {string} file */
export const exists = (file) => fs.existsSync(file);

/**
 * A JSON file's value, or null when it is missing or not JSON.
 * @param {string} file
 * @returns {any}
 */
export function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}
