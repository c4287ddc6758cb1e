import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { Spec } from "../../src/domain/schemas.js";
import { systemFiles } from "../../supervisor/deps.js";
import { superviseDispatch } from "../../supervisor/supervise.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { fakeAgentFolder, readJson } from "../helpers/folders.js";
import { loopSpec, watchUntilStopped } from "../helpers/watch.js";
import { trial, useFaultKit } from "./kit.js";

// Row 7: time. Every duration comes from the monotonic clock: a jump of the wall clock (NTP, a suspended
// laptop, a person with `date -s`) neither fires nor postpones a timeout. Driven with an injected clock
// whose two faces move independently; no real waiting.

useFaultKit();

/** A clock whose monotonic and wall faces advance by their own rules on every sleep. */
function splitClock(monoStep: (ms: number) => number, wallStep: (ms: number) => number): FakeClock {
  return new FakeClock({ monoStep, wallStep });
}

const DAY = 86_400_000;
async function watch(clock: FakeClock, dir: string, overrides: Partial<Spec> = {}) {
  const reason = await watchUntilStopped(dir, clock, loopSpec(dir, "codex", overrides));
  return { reason, at: clock.mono };
}

const cases: {
  title: string;
  row: string;
  monoStep: (ms: number) => number;
  wallStep: (ms: number) => number;
  overrides?: Partial<Spec>;
  busy?: boolean;
  reason: string;
  at: [number, number];
}[] = [
  {
    title: "fires idle at 1 s of monotonic time while the wall clock leaps a day per poll",
    row: "7 wall clock jumps forward: timeout not fired early",
    monoStep: (ms) => ms,
    wallStep: () => DAY,
    reason: "idle-timeout",
    at: [1000, 1100],
  },
  {
    title: "fires idle at 1 s of monotonic time while the wall clock goes back an hour per poll",
    row: "7 wall clock jumps back: timeout not postponed",
    monoStep: (ms) => ms,
    wallStep: () => -3_600_000,
    reason: "idle-timeout",
    at: [1000, 1100],
  },
  {
    title: "fires idle on monotonic time even when the wall clock stands still",
    row: "7 wall clock frozen: timeout still fires",
    monoStep: (ms) => ms,
    wallStep: () => 0,
    reason: "idle-timeout",
    at: [1000, 1100],
  },
  {
    title: "fires the wall limit of a busy agent at 5 s monotonic while the wall clock runs backwards",
    row: "7 wall limit on monotonic time (wall clock backwards)",
    monoStep: (ms) => ms,
    wallStep: () => -DAY,
    overrides: { wallMs: 5000 },
    busy: true,
    reason: "wall-timeout",
    at: [5000, 5100],
  },
  {
    title: "fires idle after one poll when monotonic time leaps, whatever the wall clock says",
    row: "7 monotonic leap (suspend/resume): timeout fires at once",
    monoStep: () => 60_000,
    wallStep: () => 0,
    reason: "idle-timeout",
    at: [60_000, 60_000],
  },
];

describe("row 7: time", () => {
  for (const c of cases) {
    it(c.title, async () => {
      const t = trial(c.row);
      const dir = t.dir();
      if (c.busy === true) {
        fs.writeFileSync(
          path.join(dir, "events.jsonl"),
          `${JSON.stringify({ type: "item.started", item: { id: "i1", type: "command_execution", command: "make" } })}\n`,
        );
      }
      const clock = splitClock(c.monoStep, c.wallStep);
      const { reason, at } = await watch(clock, dir, c.overrides);
      expect(reason).toBe(c.reason);
      expect(at).toBeGreaterThanOrEqual(c.at[0]);
      expect(at).toBeLessThanOrEqual(c.at[1]);
      t.pass();
    });
  }

  it("writes the duration from the monotonic clock and endedAt as the start plus it (real agent, split clock)", async () => {
    const t = trial("7 exit.json duration and endedAt on monotonic time (real agent, wall +1 day per sleep)");
    const { dir, id } = fakeAgentFolder({ steps: [{ out: "x" }, { hang: true }] }, { idleMs: 1000 }, t.dir());
    t.dispatch(id);
    // Real sleeps keep the agent's spawn honest; each one adds its own length to monotonic time and a day
    // to the wall clock.
    const clock = splitClock(
      (ms) => ms,
      () => DAY,
    );
    const realSleep = clock.sleep.bind(clock);
    clock.sleep = async (ms: number) => {
      await new Promise((resolve) => setTimeout(resolve, Math.min(ms, 20)));
      await realSleep(ms);
    };
    const code = await superviseDispatch(dir, { clock, files: systemFiles }, new AbortController().signal);
    expect(code).toBe(0);
    const exit = readJson(path.join(dir, "exit.json"));
    expect(exit.reason).toBe("idle-timeout");
    expect(exit.durationMs as number).toBeGreaterThanOrEqual(1000);
    expect(exit.durationMs as number).toBeLessThan(3000);
    // The wall clock moved days meanwhile: neither the duration nor endedAt shows it (one timeline).
    expect(Date.parse(exit.endedAt as string) - Date.parse(exit.startedAt as string)).toBe(exit.durationMs);
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({ status: "timeout" });
    t.pass();
  });
});
