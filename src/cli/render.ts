import { formatDuration } from "../domain/duration.js";

// Human output: fits 80 columns, and colours only for a terminal without NO_COLOR.

export const WIDTH = 80;

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

/** Cuts text to `width` characters with an ellipsis, and pads it to exactly that width. */
export function cell(text: string, width: number): string {
  const flat = text.replace(/\s+/g, " ");
  if (flat.length > width) return `${flat.slice(0, Math.max(0, width - 1))}…`;
  return flat.padEnd(width);
}

/** "3m12s" since an ISO time, or "-". */
export function age(iso: string | null, nowMs = Date.now()): string {
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
