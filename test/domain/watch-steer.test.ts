import { describe, expect, it } from "vitest";
import {
  decide,
  initialWatch,
  nextDeadline,
  observe,
  type SteerSignals,
  type WatchLimits,
} from "../../src/domain/watch/watch.js";

// The supervisor's rules for a steerable dispatch (specs/steering.md; watch.ts, SteerSignals), on a fake
// clock: a final ends a turn, not the dispatch; the conversation ends when nothing is held and its window
// is over; waiting for a message is neither idle nor wall time; waiting for an answer is never idle.

const limits: WatchLimits = {
  idleMs: 10_000,
  wallMs: 60_000,
  stallMs: 5_000,
  graceAfterFinalMs: 3_000,
  retryAttempts: 5,
  retryWindowMs: 60_000,
};
const steer = (over: Partial<SteerSignals> = {}): SteerSignals => ({
  ended: false,
  asking: false,
  waitingSince: null,
  waitedMs: 0,
  keepOpenMs: null,
  questionDueAt: null,
  endRequestedAt: null,
  ...over,
});
/** A protocol that cannot be asked to end: no endRequestedAt at all. */
function withoutEndLine(s: SteerSignals): SteerSignals {
  const { endRequestedAt: _asked, ...rest } = s;
  return rest;
}
const afterFinal = () =>
  observe(initialWatch(0), { progress: true, final: { isError: false, message: null } }, 1_000);
const verdictAt = (now: number, s: SteerSignals, state = afterFinal()) =>
  decide(state, { exited: false, cancelRequested: false, steer: s }, limits, now).verdict;

describe("a steerable dispatch's end", () => {
  it.each([
    ["a turn ended while a message is held", steer({ ended: false }), 4_000, "continue"],
    ["ended, the end not asked yet", steer({ ended: true }), 2_000, "continue"],
    [
      "ended, the end asked, within the grace",
      steer({ ended: true, endRequestedAt: 2_000 }),
      4_000,
      "continue",
    ],
    ["ended, the end asked, past the grace", steer({ ended: true, endRequestedAt: 2_000 }), 5_000, "stop"],
    ["ended, a protocol with no end line", withoutEndLine(steer({ ended: true })), 2_000, "stop"],
    [
      "ended, keep-open window open",
      steer({ ended: true, keepOpenMs: 30_000, waitingSince: 1_000, endRequestedAt: 2_000 }),
      25_000,
      "continue",
    ],
  ] as const)("%s: %s", (_what, s, now, kind) => {
    expect(verdictAt(now, s).kind).toBe(kind);
  });

  it("forgets a turn's final once the CLI takes the next message: that turn's end is not the last word", () => {
    const taken = observe(afterFinal(), { progress: true, taken: "u1" }, 2_000);
    expect(afterFinal().finalAt).toBe(1_000);
    expect(taken.finalAt).toBeNull();
  });

  it("stops after-final once the end was asked and the CLI lingers past the grace", () => {
    expect(verdictAt(5_000, steer({ ended: true, endRequestedAt: 2_000 }))).toEqual({
      kind: "stop",
      reason: "after-final",
      errorKind: null,
    });
  });

  it("does not count the time spent waiting for messages as wall time", () => {
    const state = afterFinal();
    const waited = steer({ ended: false, waitedMs: 30_000 });
    expect(
      decide(
        state,
        { exited: false, cancelRequested: false, steer: waited },
        { ...limits, idleMs: 1e9, stallMs: 1e9 },
        70_000,
      ).verdict.kind,
    ).toBe("continue");
    expect(
      decide(
        state,
        { exited: false, cancelRequested: false, steer: steer() },
        { ...limits, idleMs: 1e9, stallMs: 1e9 },
        70_000,
      ).verdict,
    ).toMatchObject({ reason: "wall-timeout" });
  });

  it("is never idle while a question waits for its answer, nor while its turn waits for a message", () => {
    const quiet = afterFinal();
    expect(verdictAt(20_000, steer({ asking: true })).kind).toBe("continue");
    expect(
      verdictAt(20_000, steer({ ended: true, keepOpenMs: 60_000, waitingSince: 1_000, endRequestedAt: null }))
        .kind,
    ).toBe("continue");
    expect(
      decide(quiet, { exited: false, cancelRequested: false, steer: steer() }, limits, 20_000).verdict,
    ).toMatchObject({
      reason: "idle-timeout",
    });
  });

  it("wakes at the keep-open window's end, the end's grace and a question's policy deadline", () => {
    const state = afterFinal();
    expect(nextDeadline(state, limits, steer({ ended: true, keepOpenMs: 30_000, waitingSince: 1_000 }))).toBe(
      31_000,
    );
    expect(nextDeadline(state, limits, steer({ ended: true, endRequestedAt: 2_000 }))).toBe(5_000);
    expect(nextDeadline(state, limits, steer({ asking: true, questionDueAt: 7_500 }))).toBe(7_500);
  });
});
