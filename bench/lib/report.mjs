// @ts-check
// The rows of one bench run, their raw samples and the figures that are not rows (`extra`), printed as a
// text table and as the markdown table of specs/performance.md.
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

  /** The rows as an aligned plain-text table. */
  textTable() {
    const head = ["what", "median", "p95", "n", "baseline (median)", "ratio", "target", "met"];
    const body = this.rows.map((r) => [
      r.what,
      `${fmt(r.median, r.decimals)} ${r.unit}`,
      `${fmt(r.p95, r.decimals)} ${r.unit}`,
      String(r.n),
      r.baseline === null ? "" : `${r.baseline.name}: ${fmt(r.baseline.value, r.decimals)}`,
      r.ratio === null ? "" : `×${fmt(r.ratio, 2)}`,
      r.target ?? "",
      r.met === null ? "" : r.met ? "met" : "MISSED",
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? "").length)));
    /** @param {string[]} cells */
    const line = (cells) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
    return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
  }

  /** The rows as the markdown table of specs/performance.md. */
  markdownTable() {
    /** @param {string} s */
    const esc = (s) => String(s).replaceAll("|", "\\|");
    const out = [
      "| what | median | p95 | n | baseline (median, same run) | ratio | target | met | note |",
      "|---|---:|---:|---:|---|---:|---|---|---|",
    ];
    for (const r of this.rows) {
      out.push(
        `| ${esc(r.what)} | ${fmt(r.median, r.decimals)} ${r.unit} | ${fmt(r.p95, r.decimals)} ${r.unit} | ${r.n} | ${esc(
          r.baseline === null
            ? ""
            : `${r.baseline.name}: ${fmt(r.baseline.value, r.decimals)} ${r.baseline.unit ?? r.unit}`,
        )} | ${r.ratio === null ? "" : `×${fmt(r.ratio, 2)}`} | ${esc(r.target ?? "")} | ${r.met === null ? "" : r.met ? "met" : "**missed**"} | ${esc(r.note)} |`,
      );
    }
    return out.join("\n");
  }
}

/** @param {Row} r */
function formatRowText(r) {
  const base = r.baseline === null ? "" : ` | ${r.baseline.name} ${fmt(r.baseline.value, r.decimals)}`;
  const ratio = r.ratio === null ? "" : ` | ×${fmt(r.ratio, 2)}`;
  const met = r.met === null ? "" : r.met ? " | met" : " | MISSED";
  return `${r.what}: median ${fmt(r.median, r.decimals)} ${r.unit}, p95 ${fmt(r.p95, r.decimals)} (n=${r.n})${base}${ratio}${r.target ? ` | target ${r.target}` : ""}${met}`;
}
