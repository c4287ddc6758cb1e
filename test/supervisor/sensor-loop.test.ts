import { describe, expect, it } from "vitest";
import { MIN_SLEEP_MS, QUIET_POLL_MS } from "../../src/domain/watch/next-look.js";
import type { PollSignals } from "../../src/domain/watch/watch.js";
import {
  lookUntilStop,
  NOTHING,
  type Rules,
  type Sensor,
  type Sight,
  type Stop,
} from "../../supervisor/sensor.js";
import { FakeClock } from "../helpers/fake-clock.js";

// The loop over sensors on a fake clock (supervisor/sensor.ts): every poll each sensor looks in turn, the
// rules judge, and the loop sleeps until the earliest next look any of them asked for.

const NEVER = Number.POSITIVE_INFINITY;
const CANCELLED: Stop = { reason: "cancelled", errorKind: null, budget: null, disk: null };
const DISK: Stop = { reason: "supervisor-error", errorKind: "disk", budget: null, disk: null };

type Script = (now: number, seen: Readonly<PollSignals>) => Sight | Promise<Sight>;

/** A sensor that wants a look every `ms`. */
const every =
  (ms: number): Script =>
  (now) => ({ nextLookAt: now + ms });
/** A sensor that wants looks at these times only (a timetable), whenever it is looked at. */
const at =
  (...times: number[]): Script =>
  (now) => ({ nextLookAt: times.find((t) => t > now) ?? NEVER });
const idle: Script = () => NOTHING;

/** Runs the loop until the rules stop at `stopAt`; their own next look is `rulesNext` (their deadline). */
async function run(scripts: Script[], stopAt: number, rulesNext = stopAt) {
  const clock = new FakeClock();
  const looked: number[][] = scripts.map(() => []);
  const judged: { at: number; seen: PollSignals }[] = [];
  const sensors: Sensor[] = scripts.map((script, i) => ({
    look(now, seen) {
      looked[i]?.push(now);
      return script(now, seen);
    },
  }));
  const rules: Rules = {
    judge(seen, now) {
      judged.push({ at: now, seen: { ...seen } });
      return now >= stopAt ? CANCELLED : null;
    },
    nextLookAt: () => rulesNext,
  };
  const ended = await lookUntilStop({ clock, sensors, rules, sleep: (ms) => clock.sleep(ms) });
  return { ...ended, sleeps: clock.sleeps, looked, judged };
}

describe("the loop over sensors wakes at the earliest next look", () => {
  const cases: { title: string; sensors: Script[]; stopAt: number; rulesNext?: number; sleeps: number[] }[] =
    [
      {
        title: "the sooner of two cadences, to the millisecond",
        sensors: [every(300), at(1000)],
        stopAt: 1000,
        sleeps: [300, 300, 300, 100],
      },
      {
        title: "a timetable between the polls of a cadence",
        sensors: [every(1000), at(250, 1100, 1300)],
        stopAt: 2000,
        // A cadence counts from its last look: 250 + 1000 is later than 1100.
        sleeps: [250, 850, 200, 700],
      },
      {
        title: "the rules' deadline when it comes first",
        sensors: [every(1000)],
        stopAt: 700,
        rulesNext: 700,
        sleeps: [700],
      },
      {
        title: "no sensor and no rule needing a look: the safety poll",
        sensors: [idle, idle],
        stopAt: 2 * QUIET_POLL_MS,
        rulesNext: NEVER,
        sleeps: [QUIET_POLL_MS, QUIET_POLL_MS],
      },
      {
        title: "a look further off than the safety poll waits for it",
        sensors: [at(45_000)],
        stopAt: 45_000,
        rulesNext: NEVER,
        sleeps: [QUIET_POLL_MS, 15_000],
      },
      {
        title: "a sensor always overdue costs the floor, never a spin",
        sensors: [(now) => ({ nextLookAt: now - 1 })],
        stopAt: 3 * MIN_SLEEP_MS,
        sleeps: [MIN_SLEEP_MS, MIN_SLEEP_MS, MIN_SLEEP_MS],
      },
      {
        title: "a sensor that answers later (a promise) counts as one that answers at once",
        sensors: [async (now) => ({ nextLookAt: now + 400 }), every(1000)],
        stopAt: 1000,
        sleeps: [400, 400, 200],
      },
    ];
  it.each(cases)("$title", async ({ sensors, stopAt, rulesNext, sleeps }) => {
    const ended = await run(sensors, stopAt, rulesNext);
    expect(ended.sleeps).toEqual(sleeps);
    expect(ended.at).toBe(stopAt);
    expect(ended.stop).toBe(CANCELLED);
    // Every sensor looked at every poll, and the rules judged each one.
    const polls = [0, ...sleeps.map((_, i) => sleeps.slice(0, i + 1).reduce((a, b) => a + b, 0))];
    for (const looks of ended.looked) expect(looks).toEqual(polls);
    expect(ended.judged.map((j) => j.at)).toEqual(polls);
  });
});

describe("the loop over sensors, what each poll sees", () => {
  it("lets a later sensor see what an earlier one saw, and the rules all of it", async () => {
    let seenByLater: boolean | undefined;
    const ended = await run(
      [
        () => ({ saw: { exited: true }, nextLookAt: NEVER }),
        (_now, seen) => {
          seenByLater = seen.exited;
          return { saw: { cancelRequested: true }, nextLookAt: NEVER };
        },
      ],
      0,
    );
    expect(seenByLater).toBe(true);
    expect(ended.judged[0]?.seen).toEqual({ exited: true, cancelRequested: true });
  });

  it("starts each poll afresh: what a sensor saw last poll is not seen again", async () => {
    const ended = await run(
      [(now) => (now === 0 ? { saw: { exited: true }, nextLookAt: 100 } : NOTHING)],
      100,
    );
    expect(ended.judged.map((j) => j.seen.exited)).toEqual([true, false]);
  });

  it("ends at a sensor's stop, before the later sensors look and before the rules judge", async () => {
    const ended = await run(
      [every(300), (now) => (now >= 600 ? { stop: DISK, nextLookAt: NEVER } : NOTHING), every(300)],
      NEVER,
    );
    expect(ended.stop).toBe(DISK);
    expect(ended.at).toBe(600);
    expect(ended.looked).toEqual([
      [0, 300, 600],
      [0, 300, 600],
      [0, 300],
    ]);
    expect(ended.judged.map((j) => j.at)).toEqual([0, 300]);
  });
});
