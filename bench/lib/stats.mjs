// @ts-check
// Summary statistics and number formatting.

/** @typedef {{ n: number, median: number, p95: number, min: number, max: number, mean?: number }} Stats */

/**
 * Median, p95, extremes and mean of the finite values.
 * @param {readonly number[]} values
 * @returns {Stats}
 */
export function stats(values) {
  const s = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const at = (/** @type {number} */ i) => /** @type {number} */ (s[i]);
  if (s.length === 0) return { n: 0, median: Number.NaN, p95: Number.NaN, min: Number.NaN, max: Number.NaN };
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
  const p95 = at(Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1));
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { n: s.length, median, p95, min: at(0), max: at(s.length - 1), mean };
}

/**
 * A number with `d` decimals, or "–" when it is not finite.
 * @param {number} v
 * @param {number} [d]
 */
export const fmt = (v, d = 0) => (Number.isFinite(v) ? v.toFixed(d) : "–");
