import { CatherdError } from "../errors.js";

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;

/** The longest duration catherd accepts for any timeout: 30 days. */
export const MAX_DURATION_MS = 30 * UNIT_MS.d;

/**
 * Parses `250ms`, `90s`, `15m`, `1h30m`, `7d` to milliseconds, at most `maxMs`; throws E_INPUT_INVALID
 * naming the field.
 */
export function parseDuration(field: string, text: string, maxMs = MAX_DURATION_MS): number {
  const invalid = (why: string) =>
    new CatherdError("E_INPUT_INVALID", `${field} ${JSON.stringify(text)} ${why}`, {
      fix: `give ${field} as a duration such as 250ms, 90s, 15m or 1h30m`,
    });
  if (text.length === 0 || text.length > 32) throw invalid("is not a duration");
  if (text.startsWith("-")) throw invalid("must be longer than zero");
  let total = 0;
  PART.lastIndex = 0;
  let consumed = 0;
  for (let m = PART.exec(text); m !== null; m = PART.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
    consumed = PART.lastIndex;
  }
  if (consumed !== text.length) throw invalid("is not a duration");
  total = Math.round(total);
  if (total <= 0) throw invalid("must be longer than zero");
  if (total > maxMs) throw invalid(`is longer than ${Math.floor(maxMs / UNIT_MS.d)} days`);
  return total;
}

/** A short human duration: `850ms`, `42s`, `3m12s`, `1h05m`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, "0")}h`;
}

/**
 * A duration as a person would give it to `--idle`: the largest units, no zero parts — `10m`, `1h30m`,
 * `2h`, `750ms`, `1d6h`. parseDuration reads it back to the same milliseconds.
 */
export function compactDuration(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  if (whole === 0) return "0s";
  const units: [string, number][] = [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
    ["ms", 1],
  ];
  let rest = whole;
  let text = "";
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n === 0) continue;
    text += `${n}${unit}`;
    rest -= n * size;
  }
  return text;
}
