// @ts-check
// The runtimes a bench run measures side by side (one column each), and the table that puts their rows
// next to each other. Every section runs once per runtime, in a child process on that runtime, so that the
// in-process rows (ingestion, admit()) are measured on it too; the sections alternate between the runtimes
// so that background load drifting during the run hits both columns alike.
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { ROOT } from "./config.mjs";
import { fmt } from "./stats.mjs";

/** @typedef {import("./report.mjs").Row} Row */
/** One runtime measured: its binary, its version, and the rows its sections produced. @typedef {{ node: string, version: string, rows: Row[] }} Column */

/**
 * The node binaries to measure: the one running the bench, then BENCH_NODE (comma-separated paths; `none`
 * for the bench's own alone), by default Node 24 from the npm registry (scripts/node/install-node.sh,
 * cached outside the project) unless the bench already runs on 24.
 * @param {string | undefined} spec
 * @returns {string[]}
 */
export function nodesToMeasure(spec) {
  const own = process.execPath;
  if (spec === "none") return [own];
  if (spec !== undefined && spec !== "")
    return [own, ...spec.split(",").filter((n) => n !== "" && n !== own)];
  if (process.versions.node.split(".")[0] === "24") return [own];
  const bin = execFileSync("bash", [path.join(ROOT, "scripts/node/install-node.sh"), "24"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  return [own, path.join(bin, "node")];
}

/**
 * The version a node binary reports (`v24.22.3`).
 * @param {string} node
 */
export function versionOf(node) {
  return execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
}

/**
 * One table, a row per measurement and a median/ratio/met group per runtime, as markdown.
 * @param {Column[]} columns
 */
export function sideBySideMarkdown(columns) {
  /** @param {string} s */
  const esc = (s) => String(s).replaceAll("|", "\\|");
  const head = ["what", ...columns.flatMap((c) => [`${c.version} median`, "ratio", "target", "met"])];
  const out = [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`];
  for (const key of rowKeys(columns)) {
    const cells = columns.flatMap((c) => {
      const r = rowOf(c, key);
      if (r === undefined) return ["", "", "", ""];
      return [
        `${fmt(r.median, r.decimals)} ${r.unit}`,
        r.ratio === null ? "" : `×${fmt(r.ratio, 2)}`,
        esc(r.target ?? ""),
        r.met === null ? "" : r.met ? "met" : "**missed**",
      ];
    });
    out.push(`| ${esc(whatOf(columns, key))} | ${cells.join(" | ")} |`);
  }
  return out.join("\n");
}

/**
 * The same as aligned plain text, for the terminal.
 * @param {Column[]} columns
 */
export function sideBySideText(columns) {
  const head = ["what", ...columns.flatMap((c) => [c.version, "ratio", "met"])];
  const body = rowKeys(columns).map((key) => {
    return [
      whatOf(columns, key),
      ...columns.flatMap((c) => {
        const r = rowOf(c, key);
        if (r === undefined) return ["", "", ""];
        return [
          `${fmt(r.median, r.decimals)} ${r.unit}`,
          r.ratio === null ? "" : `×${fmt(r.ratio, 2)}`,
          r.met === null ? "" : r.met ? "met" : "MISSED",
        ];
      }),
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? "").length)));
  /** @param {string[]} cells */
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}

/**
 * Every row key, in the order the first column that has it printed it.
 * @param {Column[]} columns
 */
function rowKeys(columns) {
  /** @type {string[]} */
  const keys = [];
  for (const c of columns) for (const r of c.rows) if (!keys.includes(r.key)) keys.push(r.key);
  return keys;
}

/**
 * A column's row of `key`, if that runtime measured it.
 * @param {Column} column
 * @param {string} key
 */
function rowOf(column, key) {
  return column.rows.find((row) => row.key === key);
}

/**
 * What a row measures, from the first column that has it.
 * @param {Column[]} columns
 * @param {string} key
 */
function whatOf(columns, key) {
  return columns.map((c) => rowOf(c, key)?.what).find((w) => w !== undefined) ?? key;
}
