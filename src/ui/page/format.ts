import { formatDuration } from "../../domain/text/duration.js";

// How the page writes times, sizes and money. Pure: no DOM.

/** "850ms", "42s", "3m12s", "1h05m": how long, as catherd writes it everywhere; "–" for no time. */
export function duration(ms: number): string {
  return Number.isFinite(ms) && ms >= 0 ? formatDuration(ms) : "–";
}

/** The time since an ISO time, or "–". */
export function since(iso: string | null, now: number): string {
  if (iso === null) return "–";
  const t = Date.parse(iso);
  return Number.isFinite(t) ? duration(now - t) : "–";
}

/** 1234 → "1.2k", 2_500_000 → "2.5M". */
export function count(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(n < 10_000_000 ? 1 : 0)}M`;
}

/** "$0.042", "$12.30". */
export function usd(n: number | null): string {
  if (n === null) return "–";
  return n < 1 ? `$${n.toFixed(3)}` : `$${n.toFixed(2)}`;
}

/** "14:05:09" in the browser's time zone. */
export function clock(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return "–";
  return new Date(ms).toLocaleTimeString([], { hour12: false });
}
