// @ts-check
// The rows of one section on one runtime, their raw samples and the figures that are not rows (`extra`);
// each row is printed as it is added (bench/lib/columns.mjs puts the runtimes' rows side by side).
import { fmt, stats } from "./stats.mjs";

/** @typedef {import("./stats.mjs").Stats} Stats */
/** A baseline measured in the same run. @typedef {{ name: string, value: number, unit?: string }} Baseline */
/** @typedef {{ text: string, ok: (s: Stats, ratio: number | null) => boolean }} Target */

/**
 * @typedef {object} RowInput
 * @property {string} key        the row's key in results.json's raw samples
 * @property {string} what
 * @property {string} unit
 * @property {number[]} samples
 * @property {Baseline | null} [baseline]
 * @property {Target | null} [target]   lower is better unless the target says otherwise
 * @property {string} [note]
 * @property {number} [decimals]
 */

/**
 * @typedef {Stats & { key: string, what: string, unit: string, decimals: number, baseline: Baseline | null,
 *   ratio: number | null, target: string | null, met: boolean | null, note: string }} Row
 */

export class Report {
  /** @type {Row[]} */
  rows = [];
  /** Every row's samples by key, and other sample series. @type {Record<string, number[]>} */
  raw = {};
  /** Figures that are not rows, by name. @type {Record<string, any>} */
  extra = {};

  /**
   * Adds one line of the table and prints it.
   * @param {RowInput} input
   * @returns {Row}
   */
  row({ key, what, unit, samples, baseline = null, target = null, note = "", decimals = 0 }) {
    const s = stats(samples);
    this.raw[key] = samples;
    const ratio = baseline !== null && Number.isFinite(baseline.value) ? s.median / baseline.value : null;
    const met = target === null ? null : s.n > 0 && target.ok(s, ratio);
    /** @type {Row} */
    const row = { key, what, unit, ...s, decimals, baseline, ratio, target: target?.text ?? null, met, note };
    this.rows.push(row);
    console.log(`  ${formatRowText(row)}`);
    return row;
  }
}

/** @param {Row} r */
function formatRowText(r) {
  const base = r.baseline === null ? "" : ` | ${r.baseline.name} ${fmt(r.baseline.value, r.decimals)}`;
  const ratio = r.ratio === null ? "" : ` | ×${fmt(r.ratio, 2)}`;
  const met = r.met === null ? "" : r.met ? " | met" : " | MISSED";
  return `${r.what}: median ${fmt(r.median, r.decimals)} ${r.unit}, p95 ${fmt(r.p95, r.decimals)} (n=${r.n})${base}${ratio}${r.target ? ` | target ${r.target}` : ""}${met}`;
}
