import type { QueueInfo } from "./rows.js";

// Why a queued dispatch waits, in the words `status`, `show` and the dashboard all print (specs/cli.md,
// `status`; specs/ui.md, "The views").

/** "queued #2: run at cap 3", "queued #1: overlaps fix-tests (…/src/)", "queued #1: until 14:05", "queued: slurm Licenses (job 12)". */
export function queuedText(q: QueueInfo): string {
  if (q.engine !== undefined) return `queued: ${q.engine.name} ${q.engine.reason} (job ${q.engine.jobId})`;
  const place = q.position === null ? "next" : `#${q.position}`;
  const b = q.blocker;
  const why =
    q.blockedBy === "overlap"
      ? `overlaps ${b?.name ?? "?"} (${shortPath(b?.owns ?? "?")})`
      : q.blockedBy === "backend-cap"
        ? `${b?.backend ?? "?"} at cap ${b?.cap ?? "?"}`
        : q.blockedBy === "capacity"
          ? `run at cap ${b?.cap ?? "?"}`
          : q.blockedBy === "budget"
            ? "run's budget spent"
            : `until ${q.notBefore?.slice(11, 16) ?? "?"}`;
  return `queued ${place}: ${why}`;
}

/** The last two parts of an absolute path, which say which file or folder it is: "…/src/sum.ts". */
function shortPath(p: string): string {
  const parts = p.split("/").filter((part) => part !== "");
  if (parts.length <= 2) return p;
  return `…/${parts.slice(-2).join("/")}${p.endsWith("/") ? "/" : ""}`;
}
