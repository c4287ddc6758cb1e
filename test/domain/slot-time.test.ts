import { describe, expect, it } from "vitest";
import { NO_SLOTS, observeSlots, type SlotSignals, slotWaitedMs } from "../../src/domain/lock/slot-time.js";
import type { LineFacts } from "../../src/domain/watch/facts.js";
import {
  decide,
  initialWatch,
  nextDeadline,
  observe,
  type WatchLimits,
  type WatchState,
} from "../../src/domain/watch/watch.js";

// Heavy slots in the supervisor's rules, to the millisecond on a fake clock: a lock waiting or running
// is busy; its wait counts against neither the idle limit nor the wall; the record's total is exact.

const LIMITS: WatchLimits = {
  idleMs: 2000,
  wallMs: 10_000,
  stallMs: 1000,
  graceAfterFinalMs: null,
  retryAttempts: 3,
  retryWindowMs: 180_000,
};
const quiet = { exited: false, cancelRequested: false };
const waiting: SlotSignals = { waiting: true, running: false };
const running: SlotSignals = { waiting: false, running: true };
const progress: LineFacts = { progress: true };

type Step = [at: number, what: SlotSignals | LineFacts];

/** Replays lines and lock reports at their times from a dispatch started at 0. */
function replay(steps: Step[]): WatchState {
  let state = initialWatch(0);
  for (const [at, what] of steps) {
    state = "progress" in what ? observe(state, what, at) : observeSlots(state, what, at);
  }
  return state;
}

/** Where a quiet dispatch stops, walking deadline to deadline as the loop does. */
function stopOf(state: WatchState, limits = LIMITS): { at: number; reason: string } {
  let current = state;
  for (let steps = 0; steps < 100; steps++) {
    const at = nextDeadline(current, limits);
    const judged = decide(current, quiet, limits, at);
    if (judged.verdict.kind === "stop") return { at, reason: judged.verdict.reason };
    current = judged.state;
  }
  throw new Error("never stopped");
}

describe("observeSlots", () => {
  it("counts a wait from when its lock began to wait, as the lock reports it, when the poll saw it late", () => {
    const late = replay([
      [3000, { waiting: true, running: false, waitingSince: 1200 }],
      [9000, running],
    ]);
    expect(late.slotWaitedMs).toBe(7800);
  });

  it("places a reported start never before the dispatch started, nor after the poll that sees it", () => {
    const early = replay([
      [500, { waiting: true, running: false, waitingSince: -4000 }],
      [1500, running],
    ]);
    expect(early.slotWaitedMs).toBe(1500);
    const ahead = replay([
      [500, { waiting: true, running: false, waitingSince: 900 }],
      [1500, running],
    ]);
    expect(ahead.slotWaitedMs).toBe(1000);
  });

  it("counts a wait from the poll that sees it to the poll that sees it over", () => {
    const state = replay([
      [500, waiting],
      [6500, running],
    ]);
    expect(state.slotWaitedMs).toBe(6000);
    expect(state.slotWaitSince).toBeNull();
    expect(slotWaitedMs(state, 9000)).toBe(6000);
    expect(slotWaitedMs(replay([[500, waiting]]), 2500)).toBe(2000);
  });

  it("adds up the waits of one dispatch, and one wait seen at two polls is counted once", () => {
    const state = replay([
      [100, waiting],
      [200, waiting],
      [1100, NO_SLOTS],
      [3000, waiting],
      [3500, running],
    ]);
    expect(state.slotWaitedMs).toBe(1500);
  });

  it("starts the quiet stretch again when the last lock ends: the command's result is news", () => {
    const state = replay([
      [100, running],
      [7000, NO_SLOTS],
    ]);
    expect(state.quietSince).toBe(7000);
    expect(state.slotBusy).toBe(false);
    expect(replay([[100, running]]).slotBusy).toBe(true);
  });
});

describe("decide with heavy slots", () => {
  const cases: { title: string; steps: Step[]; stop: { at: number; reason: string } }[] = [
    {
      title: "an agent quiet with no lock is idle at idleMs",
      steps: [],
      stop: { at: 2000, reason: "idle-timeout" },
    },
    {
      title: "a lock waiting 6 s is not idle; the quiet stretch starts again when it ends",
      steps: [
        [500, waiting],
        [6500, running],
        [9000, NO_SLOTS],
      ],
      stop: { at: 11_000, reason: "idle-timeout" },
    },
    {
      title: "the wall stands still while a lock waits: 10 s of wall after a 6 s wait ends at 16 s",
      steps: [
        [0, progress],
        [1000, waiting],
        [7000, running],
      ],
      stop: { at: 16_000, reason: "wall-timeout" },
    },
    {
      title: "a command that runs counts against the wall",
      steps: [[1000, running]],
      stop: { at: 10_000, reason: "wall-timeout" },
    },
  ];
  for (const c of cases) {
    it(c.title, () => {
      expect(stopOf(replay(c.steps))).toEqual(c.stop);
    });
  }

  it("judges the wall to the millisecond: 1 ms before its due time the dispatch goes on", () => {
    const state = replay([
      [1000, waiting],
      [4000, running],
    ]);
    const limits = { ...LIMITS, idleMs: 60_000, stallMs: 30_000 };
    expect(nextDeadline(state, limits)).toBe(13_000);
    expect(decide(state, quiet, limits, 12_999).verdict.kind).toBe("continue");
    expect(decide(state, quiet, limits, 13_000).verdict).toMatchObject({ reason: "wall-timeout" });
  });

  it("names no wall deadline while a lock waits, and writes no stall notice while a lock is busy", () => {
    const state = replay([[100, waiting]]);
    // The only deadline left is the idle limit, which a busy dispatch meets by starting its quiet again.
    expect(nextDeadline(state, LIMITS)).toBe(2000);
    const judged = decide(state, quiet, LIMITS, 2000);
    expect(judged.verdict).toEqual({ kind: "continue" });
    expect(judged.state.quietSince).toBe(2000);
    expect(decide(state, quiet, LIMITS, 1000).state.stalled).toBe(false);
    // Waiting a day does not reach the wall.
    expect(decide(state, quiet, LIMITS, 86_400_000).verdict.kind).toBe("continue");
  });
});
