import {
  minutesOf,
  percentOf,
  type QuotaWindow,
  quotaName,
  resetFromSeconds,
} from "../domain/spend/quota.js";
import { asRecord, asString } from "./line-parsing.js";

// codex's rate-limit windows (specs/backends.md, "Quota windows"), in one place for both places it reports
// them: a `RateLimitSnapshot` of `primary` and `secondary` windows, each in percent, minutes and Unix
// seconds, or null when that report has no news of it. codex 0.171.0 reads them from the
// `x-codex-{primary,secondary}-{used-percent,window-minutes,reset-at}` headers of every answer (a 429's
// too, with an API key as well) and reports them in the app-server's `account/rateLimits/updated`
// (camelCase: usedPercent, windowDurationMins, resetsAt, limitId) and in its rollout's `token_count` events
// (snake_case: used_percent, window_minutes, resets_at, limit_id); `exec --json` drops them. codex says no
// status of a window: a window used to 100 % is spent (quota.ts).

/** The field names of one of the two spellings. */
interface Spelling {
  limit: string;
  used: string;
  minutes: string;
  resets: string;
}

export const APP_SERVER_SPELLING: Spelling = {
  limit: "limitId",
  used: "usedPercent",
  minutes: "windowDurationMins",
  resets: "resetsAt",
};
export const ROLLOUT_SPELLING: Spelling = {
  limit: "limit_id",
  used: "used_percent",
  minutes: "window_minutes",
  resets: "resets_at",
};

/** The windows a snapshot reports ([] for none); figures that are not figures are dropped (quota.ts). */
export function codexWindows(snapshot: Record<string, unknown> | null, spelling: Spelling): QuotaWindow[] {
  const limit = quotaName(asString(snapshot?.[spelling.limit]) ?? "");
  const quota: QuotaWindow[] = [];
  for (const window of ["primary", "secondary"] as const) {
    const w = asRecord(snapshot?.[window]);
    if (w === null) continue;
    quota.push({
      limit,
      window,
      usedPercent: percentOf(w[spelling.used]),
      windowMinutes: minutesOf(w[spelling.minutes]),
      resetsAt: resetFromSeconds(w[spelling.resets]),
      status: null,
    });
  }
  return quota;
}
