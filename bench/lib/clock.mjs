// @ts-check
// Agents stamp `date +%s%N` (CLOCK_REALTIME); files carry mtimes on the same clock. The bench reads wall
// time as an anchor taken at a Date.now() edge plus performance.now() since then: sub-millisecond and on
// the realtime clock. Re-anchored before each repetition so that clock slewing cannot accumulate.
import * as fs from "node:fs";

let wallAnchor = Date.now();
let perfAnchor = performance.now();

/** Re-anchors wallMs() at the next edge of Date.now(). */
export function calibrate() {
  const start = Date.now();
  let now = Date.now();
  while (now === start) now = Date.now();
  perfAnchor = performance.now();
  wallAnchor = now;
}

/** Realtime-clock milliseconds with sub-millisecond resolution. */
export function wallMs() {
  return wallAnchor + (performance.now() - perfAnchor);
}

/**
 * The realtime ms an agent stamped into `file` (`date +%s%N`).
 * @param {string} file
 */
export function markMs(file) {
  return Number(BigInt(fs.readFileSync(file, "utf8").trim()) / 1000n) / 1000;
}

/**
 * A file's mtime in realtime ms, to the microsecond.
 * @param {string} file
 */
export function mtimeMs(file) {
  return Number(fs.statSync(file, { bigint: true }).mtimeNs / 1000n) / 1000;
}
