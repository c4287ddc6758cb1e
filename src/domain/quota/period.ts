// The periods a budget renews by (specs/quota.md, "Budgets by period"): a day from 00:00, a week from
// Monday 00:00, a month from the 1st 00:00, in the machine's local calendar (TZ honoured, so a day across
// a change of daylight saving time lasts 23 or 25 hours). Pure: the time and the calendar's shift are
// given. `shiftMs` reads the calendar that far ahead of the clock (the test hook of specs/supervisor.md,
// "Test hooks"); 0 otherwise.

/** The periods a budget may renew by, in the order they are listed. */
export const PERIODS = ["day", "week", "month"] as const;
export type Period = (typeof PERIODS)[number];

/** One period: when it starts and ends (ms since the epoch, the end exclusive), and its name. */
export interface PeriodSpan {
  startMs: number;
  endMs: number;
  /** "2026-12-06" (a day), "2026-12-07" (a week: its Monday), "2026-12" (a month). */
  key: string;
}

/** The period of `per` that holds the instant `ms`. */
export function periodAt(per: Period, ms: number, shiftMs = 0): PeriodSpan {
  const local = new Date(ms + shiftMs);
  const y = local.getFullYear();
  const m = local.getMonth();
  const d = local.getDate();
  if (per === "month") {
    return span(new Date(y, m, 1), new Date(y, m + 1, 1), `${y}-${pad(m + 1)}`, shiftMs);
  }
  // Monday is the first day of a week: getDay() is 0 on a Sunday.
  const first = per === "week" ? d - ((local.getDay() + 6) % 7) : d;
  const start = new Date(y, m, first);
  const end = new Date(y, m, first + (per === "week" ? 7 : 1));
  return span(start, end, dateKey(start), shiftMs);
}

function span(start: Date, end: Date, key: string, shiftMs: number): PeriodSpan {
  return { startMs: start.getTime() - shiftMs, endMs: end.getTime() - shiftMs, key };
}

function dateKey(day: Date): string {
  return `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}`;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** "2026-12-07 00:00": a local time as `status` and `usage` show a period's end. */
export function localMinute(ms: number, shiftMs = 0): string {
  const t = new Date(ms + shiftMs);
  return `${dateKey(t)} ${pad(t.getHours())}:${pad(t.getMinutes())}`;
}

/**
 * The prefix of the dispatch ids created at or after `ms` compares at or above: `YYYYMMDDTHHMMSSZ` of
 * its UTC second. A folder whose id sorts below the prefix of a period's start was created before it.
 */
export function idPrefixAt(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/[-:]/g, "").replace(".000Z", "Z");
}
