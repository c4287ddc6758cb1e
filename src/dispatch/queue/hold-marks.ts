import {
  accountKey,
  type Blocked,
  blockerOf,
  type Caps,
  type Slot,
} from "../../domain/admission/admission-rules.js";
import { isSpent } from "../../domain/spend/quota.js";
import type { QueueBlocker } from "../../domain/vocab.js";
import { FILES } from "../../folder/layout.js";
import { writeLiveMarker } from "../../folder/markers.js";
import { readFolderJson } from "../../folder/read.js";
import { writeFolderJson } from "../../folder/write.js";
import type { RunPaths } from "../../infra/paths.js";
import type { QueuedEntry } from "../read/queued.js";

// What holds a queued dispatch when the run's budget is spent, its accounts are out of window or a budget
// by period is spent, and again once they are not (specs/dispatch.md, "A run's budget"; specs/quota.md):
// queued.json and the marker say `budget`, `window` or `period-budget` (with when it frees) while that
// holds it, then
// what holds it after (its cap, an overlap), so that `status`, `show` and a person reading the folder see
// why it waits. Under the run's admission lock, inside promotion. Each dispatch is rewritten once per
// change: the marker's `blockedBy` (and a window's `until`) say what its queued.json says, so nothing else
// is read; a run with no spent budget and no account out of window judges none of its queue.

/** The holds that come from outside the run's slots: marked, and unmarked, as they come and go. */
const HOLDS: ReadonlySet<QueueBlocker> = new Set(["budget", "window", "period-budget", "host"]);
/** The holds that free at a time (`until`): the waker starts what they held (specs/quota.md). */
const TIMED: ReadonlySet<QueueBlocker> = new Set(["window", "period-budget", "host"]);

/** A promotion as the marks see it: what it starts (`chosen`, by folder), the slots after it, its caps, when. */
export interface PromotionNow {
  chosen: ReadonlySet<string>;
  held: readonly Slot[];
  caps: Caps;
  nowMs: number;
}

/**
 * Marks the queued dispatches whose hold changed (see holdMarksDue); returns when the first of those a
 * window, a budget's period or a time (a timed retry) holds frees (ms), null when none waits for a time: what the home's
 * parked index says of the run.
 */
export function markHolds(
  run: RunPaths,
  waiting: readonly QueuedEntry[],
  promotion: PromotionNow,
): number | null {
  const { marks, parkedUntil } = holdMarksDue(waiting, promotion);
  for (const { entry, blocked } of marks) mark(run, entry, blocked);
  return parkedUntil;
}

/**
 * Which waiting dispatches get a new mark, and which: one held now by the budget or a window that is not
 * marked so (or a window that frees at another time), and one marked so that something else holds now
 * (none: left as it is, for the next promotion to start). The ones this promotion starts get none. Also
 * the first time a window or a timed retry's time frees one of them.
 */
export function holdMarksDue<Q extends QueuedEntry>(
  waiting: readonly Q[],
  promotion: PromotionNow,
): { marks: { entry: Q; blocked: Blocked }[]; parkedUntil: number | null } {
  const { chosen, held, caps, nowMs } = promotion;
  const mayHold = windowsMayHold(caps);
  const marks: { entry: Q; blocked: Blocked }[] = [];
  let parkedUntil: number | null = null;
  const parkTill = (ms: number) => {
    parkedUntil = Math.min(parkedUntil ?? Number.POSITIVE_INFINITY, ms);
  };
  for (const entry of waiting) {
    const marked = entry.marker.queued?.blockedBy;
    if (chosen.has(entry.marker.dir)) continue;
    // A timed retry waits for its time as parked work does: the waker starts both.
    if (entry.notBefore !== null && entry.notBefore > nowMs) parkTill(entry.notBefore);
    if (caps.spent === null && !HOLDS.has(marked as QueueBlocker) && !mayHold(entry)) continue;
    const blocked = blockerOf(entry, held, caps, nowMs);
    if (blocked === null) continue;
    const until = blocked.blocker?.until ?? null;
    if (TIMED.has(blocked.blockedBy) && until !== null) parkTill(Date.parse(until));
    const changed =
      blocked.blockedBy !== marked ||
      (TIMED.has(marked as QueueBlocker) && (entry.marker.queued?.until ?? null) !== until);
    if (changed && (HOLDS.has(blocked.blockedBy) || HOLDS.has(marked as QueueBlocker))) {
      marks.push({ entry, blocked });
    }
  }
  return { marks, parkedUntil };
}

/**
 * Whether a window or a budget by period may hold a queued dispatch: a budget is spent, or one of its
 * accounts has a window that was spent when last seen (time aside: a reset passed still asks for a
 * probe). Without any, no dispatch needs judging.
 */
function windowsMayHold(caps: Caps): (entry: QueuedEntry) => boolean {
  // A budget by period spent may hold any of them: each is judged.
  if ((caps.periods ?? []).length > 0) return () => true;
  const spent = new Set<string>();
  for (const [key, windows] of caps.windows ?? []) {
    // Spent at the lowest headroom a dispatch may keep (1 %): any window with use, or refused.
    if (windows.some((w) => isSpent(w, 1))) spent.add(key);
  }
  if (spent.size === 0) return () => false;
  return (entry) => (entry.accounts?.pool ?? []).some((name) => spent.has(accountKey(entry.backend, name)));
}

function mark(run: RunPaths, q: QueuedEntry, blocked: Blocked): void {
  const read = readFolderJson(q.marker.dir, FILES.queued);
  if (read.kind !== "ok" || q.marker.queued === undefined) return;
  const { schema: _schema, ...queued } = read.value;
  writeFolderJson(q.marker.dir, FILES.queued, {
    ...queued,
    blockedBy: blocked.blockedBy,
    blocker: blocked.blocker,
  });
  const until = TIMED.has(blocked.blockedBy) ? { until: blocked.blocker?.until ?? null } : {};
  const { until: _until, ...kept } = q.marker.queued;
  writeLiveMarker(run, {
    ...stripSchema(q.marker),
    queued: { ...kept, blockedBy: blocked.blockedBy, ...until },
  });
}

function stripSchema<T extends { schema: unknown }>(value: T): Omit<T, "schema"> {
  const { schema: _schema, ...rest } = value;
  return rest;
}
