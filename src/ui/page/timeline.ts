import type { BarWire } from "../wire.js";
import { h, svg } from "./dom.js";
import { clock, duration } from "./format.js";
import { type Layout, layoutTimeline, type PlacedBar } from "./timeline-layout.js";

// The run's timeline as SVG: one bar per attempt from admission to record, its queue wait shaded, the
// attempts of a chain joined by a line (a conversation's turns by a dashed one), coloured by status (or
// state while live), now marked. A bar's <title> says what it is; clicking it opens the dispatch.

const WIDTH = 1000;
const LANE = 14;
const BAR = 10;
const AXIS = 18;
const MAX_HEIGHT_LANES = 60;
/** A bar narrower than this (in the SVG's units) has no room for its name. */
const LABEL_MIN_WIDTH = 90;

/** The layout's times and lanes as the SVG's coordinates. */
interface Scale {
  x(ms: number): number;
  y(lane: number): number;
  /** The whole drawing's height: the axis and every lane. */
  height: number;
}

/** The timeline of `bars` at `nowMs`; a click on a bar calls `open` with its dispatch id. */
export function renderTimeline(bars: readonly BarWire[], nowMs: number, open: (id: string) => void): Element {
  if (bars.length === 0) return h("p", { class: "empty" }, "No dispatches yet.");
  const layout = layoutTimeline(bars, nowMs);
  const scale = scaleOf(layout);
  const root = svg("svg", {
    class: "timeline",
    viewBox: `0 0 ${WIDTH} ${scale.height}`,
    preserveAspectRatio: "none",
    height: Math.min(scale.height, AXIS + MAX_HEIGHT_LANES * LANE) * 1.2,
    role: "img",
    "aria-label": `timeline of ${bars.length} dispatches`,
  });
  root.append(
    ...ticks(layout, scale),
    ...joins(layout, scale),
    ...layout.bars.map((p) => barGroup(p, scale)),
  );
  // One listener for every bar: a run can have a thousand.
  root.addEventListener("click", (event) => {
    const id = (event.target as Element | null)?.closest("g.bar-group")?.getAttribute("data-id");
    if (id != null) open(id);
  });
  root.append(
    svg("line", { class: "now", x1: scale.x(nowMs), x2: scale.x(nowMs), y1: AXIS - 6, y2: scale.height }),
  );
  return h("div", { class: "timeline-box" }, root);
}

function scaleOf(layout: Layout): Scale {
  const span = Math.max(1, layout.endMs - layout.startMs);
  return {
    x: (ms) => ((ms - layout.startMs) / span) * WIDTH,
    y: (lane) => AXIS + lane * LANE,
    height: AXIS + layout.lanes * LANE + 4,
  };
}

/** Five ticks across the span, each a line down the lanes and the clock time it marks. */
function ticks(layout: Layout, { x, height }: Scale): SVGElement[] {
  const span = Math.max(1, layout.endMs - layout.startMs);
  const marks: SVGElement[] = [];
  for (let i = 0; i <= 4; i++) {
    const ms = layout.startMs + (span * i) / 4;
    marks.push(
      svg("line", { class: "tick", x1: x(ms), x2: x(ms), y1: AXIS - 4, y2: height }),
      svg("text", { class: "tick-label", x: Math.min(x(ms) + 2, WIDTH - 60), y: 11 }, clock(ms)),
    );
  }
  return marks;
}

/** A line from each attempt's end to the next one's start: dashed ("follow-up") into a follow-up. */
function joins(layout: Layout, { x, y }: Scale): SVGElement[] {
  const lines: SVGElement[] = [];
  for (const chain of layout.chains) {
    for (let i = 1; i < chain.length; i++) {
      const a = chain[i - 1];
      const b = chain[i];
      if (a === undefined || b === undefined) continue;
      lines.push(
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
  return lines;
}

/** One attempt: its tooltip, its bar (class by status, else state), its name when it fits, its wait. */
function barGroup(p: PlacedBar, { x, y }: Scale): SVGElement {
  const { bar } = p;
  const kind = bar.status !== null ? `s-${bar.status}` : `st-${bar.state}`;
  const width = Math.max(2, x(p.endMs) - x(p.startMs));
  const group = svg("g", { class: "bar-group", "data-id": bar.dispatchId, tabindex: 0 });
  group.append(
    svg("title", null, barTitle(p)),
    svg("rect", {
      class: `bar ${kind}${p.open ? " open" : ""}`,
      x: x(p.startMs),
      y: y(p.lane),
      width,
      height: BAR,
      rx: 2,
    }),
  );
  if (width > LABEL_MIN_WIDTH) {
    group.append(svg("text", { class: "bar-label", x: x(p.startMs) + 3, y: y(p.lane) + BAR - 2 }, bar.name));
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
  return group;
}

/** The tooltip: "name (attempt 2): ok, 3m12s, queued 12s" ("follow-up of ‹id›" for a follow-up). */
function barTitle(p: PlacedBar): string {
  const { bar } = p;
  const which = bar.followUpOf === null ? `attempt ${bar.attempt}` : `follow-up of ${bar.followUpOf}`;
  const queued = p.waitEndMs === null ? "" : `, queued ${duration(p.waitEndMs - p.startMs)}`;
  return `${bar.name} (${which}): ${bar.status ?? bar.state}, ${duration(p.endMs - p.startMs)}${queued}`;
}
