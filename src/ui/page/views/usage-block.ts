import type { UsagePointWire, UsageWire } from "../../wire.js";
import { h, svg } from "../dom.js";
import { count, usd } from "../format.js";
import { empty } from "./part.js";

// A dispatch's usage on its page: the totals as far as its files say (src/ui/server/usage-wire.ts reads them),
// its caps, and its tokens over time against the token cap.

/** The usage line — input (cached), output, further fields, cost and its source, caps — and the chart. */
export function usageBlock(u: UsageWire | null, points: UsagePointWire[]): HTMLElement {
  if (u === null) return empty("no usage reported");
  const caps = Object.entries(u.caps).map(([k, v]) => `${k} cap ${k === "usd" ? usd(v) : count(v)}`);
  const more = Object.entries(u.more).map(([k, v]) => `${k} ${count(v)}`);
  return h(
    "div",
    { class: "usage" },
    h(
      "p",
      null,
      `input ${count(u.input)} (cached ${count(u.cached)}), output ${count(u.output)}`,
      more.length > 0 ? `, ${more.join(", ")}` : "",
      ` · cost ${usd(u.costUsd)}${u.costSource === null ? "" : ` (${u.costSource})`}`,
      caps.length > 0 ? ` · ${caps.join(", ")}` : "",
    ),
    usageChart(points, u.caps.tokens ?? null),
  );
}

/** Tokens over time as a line, the token cap (if any) as a dashed line above it; null under two dated points. */
function usageChart(points: UsagePointWire[], cap: number | null): Node | null {
  const dated = points.filter((p): p is UsagePointWire & { atMs: number } => p.atMs !== null);
  if (dated.length < 2) return null;
  const W = 600;
  const H = 120;
  const t0 = dated[0]?.atMs ?? 0;
  const t1 = Math.max(t0 + 1, dated.at(-1)?.atMs ?? 0);
  const top = Math.max(cap ?? 0, ...dated.map((p) => p.tokens), 1);
  const x = (t: number) => ((t - t0) / (t1 - t0)) * (W - 10) + 5;
  const y = (v: number) => H - 5 - (v / top) * (H - 20);
  const chart = svg(
    "svg",
    { class: "usage-chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "tokens over time" },
    svg("polyline", {
      class: "usage-line",
      points: dated.map((p) => `${x(p.atMs)},${y(p.tokens)}`).join(" "),
    }),
  );
  if (cap !== null) chart.append(svg("line", { class: "cap", x1: 0, x2: W, y1: y(cap), y2: y(cap) }));
  chart.append(svg("text", { class: "tick-label", x: 6, y: 12 }, `${count(top)} tokens`));
  return chart;
}
