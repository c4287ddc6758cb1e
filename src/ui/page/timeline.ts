import type { BarWire } from "../wire.js";
import { h, svg } from "./dom.js";
import { clock, duration } from "./format.js";
import { layoutTimeline } from "./timeline-layout.js";

// The run's timeline as SVG: one bar per attempt from admission to record, its queue wait shaded, the
// attempts of a chain joined by a line (a conversation's turns by a dashed one), coloured by status (or state while live), now marked. A bar's
// <title> says what it is; clicking it opens the dispatch.

const WIDTH = 1000;
const LANE = 14;
const BAR = 10;
const AXIS = 18;
const MAX_HEIGHT_LANES = 60;

export function renderTimeline(bars: readonly BarWire[], nowMs: number, open: (id: string) => void): Element {
  if (bars.length === 0) return h("p", { class: "empty" }, "No dispatches yet.");
  const layout = layoutTimeline(bars, nowMs);
  const span = Math.max(1, layout.endMs - layout.startMs);
  const x = (ms: number) => ((ms - layout.startMs) / span) * WIDTH;
  const y = (lane: number) => AXIS + lane * LANE;
  const height = AXIS + layout.lanes * LANE + 4;
  const root = svg("svg", {
    class: "timeline",
    viewBox: `0 0 ${WIDTH} ${height}`,
    preserveAspectRatio: "none",
    height: Math.min(height, AXIS + MAX_HEIGHT_LANES * LANE) * 1.2,
    role: "img",
    "aria-label": `timeline of ${bars.length} dispatches`,
  });
  for (let i = 0; i <= 4; i++) {
    const ms = layout.startMs + (span * i) / 4;
    root.append(
      svg("line", { class: "tick", x1: x(ms), x2: x(ms), y1: AXIS - 4, y2: height }),
      svg("text", { class: "tick-label", x: Math.min(x(ms) + 2, WIDTH - 60), y: 11 }, clock(ms)),
    );
  }
  for (const chain of layout.chains) {
    for (let i = 1; i < chain.length; i++) {
      const a = chain[i - 1];
      const b = chain[i];
      if (a === undefined || b === undefined) continue;
      root.append(
        svg("line", {
          class: b.bar.followUpOf === null ? "join" : "join follow-up",
          x1: x(a.endMs),
          x2: x(b.startMs),
          y1: y(a.lane) + BAR / 2,
          y2: y(b.lane) + BAR / 2,
          "data-chain": a.bar.chain,
        }),
      );
    }
  }
  for (const p of layout.bars) {
    const { bar } = p;
    const kind = bar.status !== null ? `s-${bar.status}` : `st-${bar.state}`;
    const width = Math.max(2, x(p.endMs) - x(p.startMs));
    const group = svg("g", { class: "bar-group", "data-id": bar.dispatchId, tabindex: 0 });
    group.append(
      svg(
        "title",
        null,
        `${bar.name} (${bar.followUpOf === null ? `attempt ${bar.attempt}` : `follow-up of ${bar.followUpOf}`}): ${bar.status ?? bar.state}, ${duration(p.endMs - p.startMs)}` +
          (p.waitEndMs === null ? "" : `, queued ${duration(p.waitEndMs - p.startMs)}`),
      ),
      svg("rect", {
        class: `bar ${kind}${p.open ? " open" : ""}`,
        x: x(p.startMs),
        y: y(p.lane),
        width,
        height: BAR,
        rx: 2,
      }),
    );
    // The name on the bar, where the bar has room for it.
    if (width > 90) {
      group.append(
        svg("text", { class: "bar-label", x: x(p.startMs) + 3, y: y(p.lane) + BAR - 2 }, bar.name),
      );
    }
    if (p.waitEndMs !== null && p.waitEndMs > p.startMs) {
      group.append(
        svg("rect", {
          class: "wait",
          x: x(p.startMs),
          y: y(p.lane),
          width: Math.max(1, x(p.waitEndMs) - x(p.startMs)),
          height: BAR,
        }),
      );
    }
    root.append(group);
  }
  root.addEventListener("click", (event) => {
    const id = (event.target as Element | null)?.closest("g.bar-group")?.getAttribute("data-id");
    if (id != null) open(id);
  });
  root.append(svg("line", { class: "now", x1: x(nowMs), x2: x(nowMs), y1: AXIS - 6, y2: height }));
  return h("div", { class: "timeline-box" }, root);
}
