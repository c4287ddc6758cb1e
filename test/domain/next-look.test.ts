import { describe, expect, it } from "vitest";
import { MIN_SLEEP_MS, QUIET_POLL_MS, sleepFor } from "../../src/domain/watch/next-look.js";

const NEVER = Number.POSITIVE_INFINITY;

describe("sleepFor: the loop sleeps until the earliest next look", () => {
  const cases: { title: string; nextLooks: number[]; now: number; sleep: number }[] = [
    { title: "the earliest of several", nextLooks: [1700, 1250, 9000], now: 1000, sleep: 250 },
    { title: "in any order", nextLooks: [9000, 1250, 1700], now: 1000, sleep: 250 },
    { title: "one that needs no look is no bound", nextLooks: [NEVER, 4000], now: 1000, sleep: 3000 },
    {
      title: "none needing a look: the safety poll",
      nextLooks: [NEVER, NEVER],
      now: 1000,
      sleep: QUIET_POLL_MS,
    },
    { title: "no sensors at all: the safety poll", nextLooks: [], now: 0, sleep: QUIET_POLL_MS },
    {
      title: "a look further than the safety poll waits for it",
      nextLooks: [100_000],
      now: 0,
      sleep: QUIET_POLL_MS,
    },
    { title: "exactly the safety poll", nextLooks: [QUIET_POLL_MS + 5], now: 5, sleep: QUIET_POLL_MS },
    { title: "a look due now: the floor, never a spin", nextLooks: [1000], now: 1000, sleep: MIN_SLEEP_MS },
    { title: "a look overdue: the floor", nextLooks: [200, 5000], now: 1000, sleep: MIN_SLEEP_MS },
    { title: "just above the floor is exact", nextLooks: [1006], now: 1000, sleep: 6 },
    { title: "NaN is no time", nextLooks: [Number.NaN, 1400], now: 1000, sleep: 400 },
    { title: "NaN alone: the safety poll", nextLooks: [Number.NaN], now: 1000, sleep: QUIET_POLL_MS },
    { title: "fractions of a millisecond stay exact", nextLooks: [1000.75], now: 500.25, sleep: 500.5 },
  ];
  it.each(cases)("$title", ({ nextLooks, now, sleep }) => {
    expect(sleepFor(nextLooks, now)).toBe(sleep);
  });

  it("keeps its bounds: 5 ms and 30 s", () => {
    expect([MIN_SLEEP_MS, QUIET_POLL_MS]).toEqual([5, 30_000]);
  });
});
