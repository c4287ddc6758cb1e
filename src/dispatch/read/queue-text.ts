import { localMinute } from "../../domain/quota/period.js";
import { formatUsd, groupDigits } from "../../domain/spend/budget.js";
import { calendarShiftMs } from "../../quota/budgets.js";
import type { QueueInfo } from "./rows.js";

// Why a queued dispatch waits, in the words `status`, `show` and the dashboard all print (specs/cli.md,
// `status`; specs/ui.md, "The views").

/**
 * "queued #2: run at cap 3", "queued #1: overlaps fix-tests (…/src/)", "queued #1: until 14:05", "queued #1:
 * codex default out of window (primary 97%), until 2026-12-07 05:00Z", "queued #1: budget home/day spent
 * ($5.00 of $5.00), until 2026-12-07 00:00", "queued #1: box does not answer (2×), tried again at
 * 02:41:05Z", "queued: slurm Licenses (job 12)".
 */
export function queuedText(q: QueueInfo): string {
  if (q.engine !== undefined) return `queued: ${q.engine.name} ${q.engine.reason} (job ${q.engine.jobId})`;
  const place = q.position === null ? "next" : `#${q.position}`;
  const b = q.blocker;
  const why =
    q.blockedBy === "overlap"
      ? `overlaps ${b?.name ?? "?"} (${shortPath(b?.owns ?? "?")})`
      : q.blockedBy === "backend-cap"
        ? `${b?.backend ?? "?"} at cap ${b?.cap ?? "?"}`
        : q.blockedBy === "host"
          ? `${b?.host ?? "?"} does not answer (${b?.tries ?? 1}×), tried again at ${b?.until?.slice(11, 19) ?? "?"}Z`
          : q.blockedBy === "host-cap"
            ? `${b?.host ?? "?"} at cap ${b?.cap ?? "?"}`
            : q.blockedBy === "capacity"
              ? `run at cap ${b?.cap ?? "?"}`
              : q.blockedBy === "budget"
                ? "run's budget spent"
                : q.blockedBy === "window"
                  ? windowText(b)
                  : q.blockedBy === "period-budget"
                    ? periodText(b)
                    : `until ${q.notBefore?.slice(11, 16) ?? "?"}`;
  return `queued ${place}: ${why}`;
}

/** "codex default out of window (primary 97%) until 2026-12-07 05:00Z", or "… until one is free". */
function windowText(b: QueueInfo["blocker"]): string {
  const used = b?.usedPercent == null ? "" : ` ${Math.round(b.usedPercent)}%`;
  const window = b?.window === undefined || b.window === "" ? "" : ` (${b.window}${used})`;
  const until =
    b?.until == null ? "until its probe ends" : `until ${b.until.slice(0, 10)} ${b.until.slice(11, 16)}Z`;
  return `${b?.backend ?? "?"} ${b?.accounts ?? "?"} out of window${window}, ${until}`;
}

/** "budget home/day spent ($5.00 of $5.00), until 2026-12-07 00:00": the period's end, local time. */
function periodText(b: QueueInfo["blocker"]): string {
  const until = b?.until == null ? "?" : localMinute(Date.parse(b.until), calendarShiftMs());
  return `budget ${b?.scope ?? "?"}/${b?.period ?? "?"} spent (${measureText(b?.budget, b?.used, b?.limit)}), until ${until}`;
}

/** "$5.00 of $5.00", "2,000,512 of 2,000,000 tokens", "61 of 60 minutes". */
export function measureText(measure: string | undefined, used = 0, limit = 0): string {
  if (measure === "usd") return `${formatUsd(used)} of ${formatUsd(limit)}`;
  const round = measure === "minutes" ? Math.floor : Math.round;
  return `${groupDigits(round(used))} of ${groupDigits(limit)} ${measure ?? "?"}`;
}

/** The last two parts of an absolute path, which say which file or folder it is: "…/src/sum.ts". */
function shortPath(p: string): string {
  const parts = p.split("/").filter((part) => part !== "");
  if (parts.length <= 2) return p;
  return `…/${parts.slice(-2).join("/")}${p.endsWith("/") ? "/" : ""}`;
}
