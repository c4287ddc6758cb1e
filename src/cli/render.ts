import { formatDuration } from "../domain/duration.js";
import { cutChars, inertText } from "../domain/inert-text.js";
import { comeBackAt } from "../domain/record-words.js";

// Human output: fits 80 columns — a terminal's own width where a table can use it — and colours only for
// a terminal without NO_COLOR.

export const WIDTH = 80;

/** How wide a table may be: the terminal's width when stdout is one (at least 60), else WIDTH. */
export function tableWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  return stream.isTTY === true && stream.columns !== undefined ? Math.max(60, stream.columns) : WIDTH;
}

const STYLES = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
} as const;
export type Style = keyof typeof STYLES;

export function colorEnabled(stream: { isTTY?: boolean } = process.stdout): boolean {
  return stream.isTTY === true && (process.env.NO_COLOR ?? "") === "" && process.env.TERM !== "dumb";
}

export function paint(text: string, style: Style, enabled = colorEnabled()): string {
  if (!enabled) return text;
  const [open, close] = STYLES[style];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

/**
 * Text for a table's cell: made inert for a terminal (an agent's words reach every column that says what
 * it is doing), its white space folded, then cut to `width` characters with an ellipsis — after the
 * escapes are gone, so no sequence is ever cut in half — and padded to exactly that width.
 */
export function cell(text: string, width: number): string {
  const flat = inertText(text).replace(/\s+/g, " ");
  if (flat.length > width) return `${cutChars(flat, Math.max(0, width - 1))}…`;
  return flat.padEnd(width);
}

/** "3m12s" since an ISO time, or "-". */
export function age(iso: string | null, nowMs: number): string {
  if (iso === null) return "-";
  const at = Date.parse(iso);
  return Number.isFinite(at) ? formatDuration(Math.max(0, nowMs - at)) : "-";
}

/** 20263 → "20.3k". */
export function count(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * Why, for the narrow result column of `status`: "rate-limit until 14:05" (the day, "Dec 1", when it is
 * further than a day), else "auth: invalid x-api-key".
 */
export function shortWhy(
  error: { kind?: string | null | undefined; message: string; retryAfter?: string | null | undefined },
  nowMs: number,
): string {
  if (error.kind == null) return error.message;
  const at = error.retryAfter == null ? Number.NaN : Date.parse(error.retryAfter);
  if (Number.isNaN(at)) return `${error.kind}: ${error.message}`;
  const date = new Date(at);
  const when =
    Math.abs(at - nowMs) < 24 * 3_600_000
      ? comeBackAt(error.retryAfter ?? "", nowMs)
      : `${MONTHS[date.getMonth()]} ${date.getDate()}`;
  return `${error.kind} until ${when}`;
}

/** 1536 → "1.5 KiB"; bytes below 1 KiB as they are. */
export function bytes(n: number): string {
  const units = ["KiB", "MiB", "GiB", "TiB"];
  if (n < 1024) return `${n} B`;
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
