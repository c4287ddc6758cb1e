import {
  MAX_WINDOWS,
  type QuotaWindow,
  quotaName,
  resetFromEpoch,
  shareOf,
  type WindowStatus,
} from "../domain/spend/quota.js";
import type { LineFacts } from "../domain/watch/facts.js";
import { NEUTRAL } from "../domain/watch/facts.js";
import { asRecord, asString } from "./line-parsing.js";

// Claude Code's subscription windows (specs/backends.md, "Quota windows"): under a claude.ai login (not an
// API key) it reads the `anthropic-ratelimit-unified-*` headers of every answer and prints, when what they
// say changes, `{"type":"rate_limit_event","rate_limit_info":{status, resetsAt, rateLimitType,
// utilization, overageStatus, overageResetsAt, surpassedThreshold…}}` (test/fixtures/recorded/claude,
// window-*; the shape is the zod schema of its SDK messages in the 2.1.197 bundle). One event names one
// window, the headers' representative claim: `status` allowed | allowed_warning | rejected, `resetsAt` in
// Unix seconds, `utilization` a fraction 0–1 given only at a warning (so a bare "allowed" says nothing of
// the share used). Newer CLIs add `unifiedWindows: {five_hour: {utilization, resetsAt}, …}`. Units are
// read defensively (quota.ts): a reset in seconds or milliseconds by magnitude, a share as a fraction up
// to 1 and a percent above it.

/** The limit every Claude window belongs to: its subscription's (the headers' "unified" limit). */
export const CLAUDE_LIMIT = "claude";
/** A window the event names no type for: the unified limit as a whole. */
const UNIFIED = "unified";

/** The length of each window Claude names, in minutes; the others are not known. */
const WINDOW_MINUTES: Readonly<Record<string, number>> = {
  five_hour: 300,
  seven_day: 10_080,
  seven_day_opus: 10_080,
  seven_day_sonnet: 10_080,
  seven_day_overage_included: 10_080,
};

const STATUS: Readonly<Record<string, WindowStatus>> = {
  allowed: "allowed",
  allowed_warning: "warning",
  rejected: "rejected",
};

/** A rate_limit_event: its windows, bookkeeping (no sign of work); NEUTRAL when it names none. */
export function rateLimitEvent(event: Record<string, unknown>): LineFacts {
  const info = asRecord(event.rate_limit_info);
  if (info === null) return NEUTRAL;
  const quota = [representative(info), overage(info), ...unified(info)].filter(
    (w): w is QuotaWindow => w !== null,
  );
  return quota.length === 0 ? NEUTRAL : { progress: false, quota: quota.slice(0, MAX_WINDOWS) };
}

/** One window of Claude's limit, its figures read in quota.ts's units. */
function window(name: string, figures: { status: unknown; used: unknown; resets: unknown }): QuotaWindow {
  const named = quotaName(name);
  return {
    limit: CLAUDE_LIMIT,
    window: named,
    usedPercent: shareOf(figures.used),
    windowMinutes: Object.hasOwn(WINDOW_MINUTES, named) ? (WINDOW_MINUTES[named] ?? null) : null,
    resetsAt: resetFromEpoch(figures.resets),
    status: statusOf(figures.status),
  };
}

function statusOf(value: unknown): WindowStatus | null {
  const said = asString(value);
  return said !== null && Object.hasOwn(STATUS, said) ? (STATUS[said] ?? null) : null;
}

/** The window the event is about: its rateLimitType, else the unified limit; null without a status. */
function representative(info: Record<string, unknown>): QuotaWindow | null {
  if (statusOf(info.status) === null) return null;
  const name = asString(info.rateLimitType) ?? UNIFIED;
  return window(name === "" ? UNIFIED : name, {
    status: info.status,
    used: info.utilization,
    resets: info.resetsAt,
  });
}

/** Pay-as-you-go past the plan (overageStatus), when the event is not already about it. */
function overage(info: Record<string, unknown>): QuotaWindow | null {
  if (statusOf(info.overageStatus) === null || info.rateLimitType === "overage") return null;
  return window("overage", { status: info.overageStatus, used: null, resets: info.overageResetsAt });
}

/** Newer CLIs' per-window figures: no status of their own. */
function unified(info: Record<string, unknown>): QuotaWindow[] {
  const windows = asRecord(info.unifiedWindows);
  if (windows === null) return [];
  return Object.entries(windows)
    .slice(0, MAX_WINDOWS)
    .flatMap(([name, value]) => {
      const figures = asRecord(value);
      if (figures === null || name === "") return [];
      const resets = figures.resetsAt ?? figures.resets_at;
      return [window(name, { status: null, used: figures.utilization, resets })];
    });
}
