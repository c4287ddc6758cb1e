// How the page writes times, sizes and money. Pure: no DOM.

/** "12s", "4m", "2h05m", "3d": how long, in the fewest characters that still say it. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "–";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d`;
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
