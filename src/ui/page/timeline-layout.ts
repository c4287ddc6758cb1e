import type { BarWire } from "../wire.js";

// The run's timeline as geometry in time: every chain of attempts (a conversation of follow-ups too) gets a lane (chains that do not
// overlap in time share one), each attempt a bar on it from admission to its record (or now), its queue
// wait marked apart. Pure: no DOM; the renderer (timeline.ts) maps times to pixels.

export interface PlacedBar {
  bar: BarWire;
  lane: number;
  startMs: number;
  /** Where its queue wait ends (null: it never waited). */
  waitEndMs: number | null;
  endMs: number;
  /** Still running (or waiting): its end is now. */
  open: boolean;
}

export interface Layout {
  startMs: number;
  endMs: number;
  lanes: number;
  bars: PlacedBar[];
  /** Each chain's attempts in order, for the joins drawn between them. */
  chains: PlacedBar[][];
}

/** A gap kept between two chains sharing a lane, as a share of the whole span. */
const LANE_GAP = 0.01;

export function layoutTimeline(bars: readonly BarWire[], nowMs: number): Layout {
  const byChain = new Map<string, BarWire[]>();
  for (const bar of bars) {
    const list = byChain.get(bar.chain);
    if (list === undefined) byChain.set(bar.chain, [bar]);
    else list.push(bar);
  }
  const placedChains = [...byChain.values()].map((list) =>
    list
      // Admission order: a chain's attempts and a conversation's turns are admitted one after the other.
      .sort((a, b) => a.admittedAtMs - b.admittedAtMs || a.attempt - b.attempt)
      .map((bar) => placeBar(bar, nowMs)),
  );
  const startMs = Math.min(nowMs, ...placedChains.flat().map((p) => p.startMs));
  const endMs = Math.max(nowMs, ...placedChains.flat().map((p) => p.endMs));
  const gap = Math.max(1, (endMs - startMs) * LANE_GAP);
  placedChains.sort((a, b) => (a[0]?.startMs ?? 0) - (b[0]?.startMs ?? 0));
  const laneEnds: number[] = [];
  for (const chain of placedChains) {
    const from = Math.min(...chain.map((p) => p.startMs));
    const to = Math.max(...chain.map((p) => p.endMs));
    let lane = laneEnds.findIndex((end) => end + gap <= from);
    if (lane === -1) {
      lane = laneEnds.length;
      laneEnds.push(to);
    } else laneEnds[lane] = to;
    for (const p of chain) p.lane = lane;
  }
  return { startMs, endMs, lanes: laneEnds.length, bars: placedChains.flat(), chains: placedChains };
}

function placeBar(bar: BarWire, nowMs: number): PlacedBar {
  const open = bar.endedAtMs === null;
  const endMs = Math.max(bar.admittedAtMs, bar.endedAtMs ?? nowMs);
  const waiting = bar.queued && bar.queuedUntilMs === null && open;
  const waitEndMs = !bar.queued ? null : waiting ? endMs : Math.min(endMs, bar.queuedUntilMs ?? endMs);
  return { bar, lane: 0, startMs: bar.admittedAtMs, waitEndMs, endMs, open };
}
