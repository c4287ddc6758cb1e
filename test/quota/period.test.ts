import { afterAll, describe, expect, it } from "vitest";
import { idPrefixAt, localMinute, type Period, periodAt } from "../../src/domain/quota/period.js";

// The periods of the budgets by period in the local calendar (specs/quota.md, "Budgets by period"). This
// file sets TZ, so it runs in a process of its own (not among the pure tests, which share threads).

const saved = process.env.TZ;
afterAll(() => {
  if (saved === undefined) delete process.env.TZ;
  else process.env.TZ = saved;
});

/** An instant given as a local time in `tz`, read back as UTC ISO for the table. */
function iso(ms: number): string {
  return new Date(ms).toISOString();
}

describe("periodAt: a day from 00:00, a week from Monday 00:00, a month from the 1st", () => {
  it.each<[string, Period, string, string, string, string]>([
    // tz, per, instant (UTC), start (UTC), end (UTC), key
    [
      "UTC",
      "day",
      "2026-12-06T19:56:00Z",
      "2026-12-06T00:00:00.000Z",
      "2026-12-07T00:00:00.000Z",
      "2026-12-06",
    ],
    [
      "UTC",
      "day",
      "2026-12-06T00:00:00Z",
      "2026-12-06T00:00:00.000Z",
      "2026-12-07T00:00:00.000Z",
      "2026-12-06",
    ],
    [
      "UTC",
      "day",
      "2026-12-06T23:59:59.999Z",
      "2026-12-06T00:00:00.000Z",
      "2026-12-07T00:00:00.000Z",
      "2026-12-06",
    ],
    // 2026-12-06 is a Sunday: its week began on Monday the 30th of November.
    [
      "UTC",
      "week",
      "2026-12-06T23:00:00Z",
      "2026-11-30T00:00:00.000Z",
      "2026-12-07T00:00:00.000Z",
      "2026-11-30",
    ],
    [
      "UTC",
      "week",
      "2026-12-07T00:00:00Z",
      "2026-12-07T00:00:00.000Z",
      "2026-12-14T00:00:00.000Z",
      "2026-12-07",
    ],
    [
      "UTC",
      "month",
      "2026-12-31T23:59:59Z",
      "2026-12-01T00:00:00.000Z",
      "2027-01-01T00:00:00.000Z",
      "2026-12",
    ],
    [
      "UTC",
      "month",
      "2028-02-29T12:00:00Z",
      "2028-02-01T00:00:00.000Z",
      "2028-03-01T00:00:00.000Z",
      "2028-02",
    ],
    [
      "UTC",
      "week",
      "2026-12-31T12:00:00Z",
      "2026-12-28T00:00:00.000Z",
      "2027-01-04T00:00:00.000Z",
      "2026-12-28",
    ],
    // Berlin springs forward on 2026-03-29 (a day of 23 hours) and falls back on 2026-10-25 (25 hours).
    [
      "Europe/Berlin",
      "day",
      "2026-03-29T12:00:00Z",
      "2026-03-28T23:00:00.000Z",
      "2026-03-29T22:00:00.000Z",
      "2026-03-29",
    ],
    [
      "Europe/Berlin",
      "day",
      "2026-10-25T12:00:00Z",
      "2026-10-24T22:00:00.000Z",
      "2026-10-25T23:00:00.000Z",
      "2026-10-25",
    ],
    [
      "Europe/Berlin",
      "week",
      "2026-03-29T12:00:00Z",
      "2026-03-22T23:00:00.000Z",
      "2026-03-29T22:00:00.000Z",
      "2026-03-23",
    ],
    [
      "Europe/Berlin",
      "month",
      "2026-03-31T22:30:00Z",
      "2026-03-31T22:00:00.000Z",
      "2026-04-30T22:00:00.000Z",
      "2026-04",
    ],
    // Local midnight of New York is 05:00Z in winter: 04:59Z is still the day before.
    [
      "America/New_York",
      "day",
      "2026-12-07T04:59:00Z",
      "2026-12-06T05:00:00.000Z",
      "2026-12-07T05:00:00.000Z",
      "2026-12-06",
    ],
    [
      "America/New_York",
      "month",
      "2026-11-01T03:00:00Z",
      "2026-10-01T04:00:00.000Z",
      "2026-11-01T04:00:00.000Z",
      "2026-10",
    ],
  ])("%s %s at %s: %s to %s (%s)", (tz, per, at, start, end, key) => {
    process.env.TZ = tz;
    const span = periodAt(per, Date.parse(at));
    expect([iso(span.startMs), iso(span.endMs), span.key]).toEqual([start, end, key]);
  });

  it("reads the calendar shifted ahead of the clock: local midnight comes that much sooner", () => {
    process.env.TZ = "UTC";
    const now = Date.parse("2026-12-06T23:59:50Z");
    const shift = 5_000;
    expect(periodAt("day", now, 0).endMs - now).toBe(10_000);
    expect(periodAt("day", now, shift).endMs - now).toBe(5_000);
    expect(periodAt("day", now + 5_000, shift).key).toBe("2026-12-07");
    expect(localMinute(periodAt("day", now, shift).endMs, shift)).toBe("2026-12-07 00:00");
  });

  it("gives the id prefix a dispatch created at that second starts with", () => {
    expect(idPrefixAt(Date.parse("2026-12-06T19:56:37.900Z"))).toBe("20261206T195637Z");
    expect("20261206T195637Z-k3x9qa" >= idPrefixAt(Date.parse("2026-12-06T19:56:37Z"))).toBe(true);
    expect("20261206T195636Z-k3x9qa" >= idPrefixAt(Date.parse("2026-12-06T19:56:37Z"))).toBe(false);
  });
});
