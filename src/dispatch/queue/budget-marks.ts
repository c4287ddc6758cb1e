import { type Blocked, blockerOf, type Caps, type Slot } from "../../domain/admission/admission-rules.js";
import { FILES } from "../../folder/layout.js";
import { writeLiveMarker } from "../../folder/markers.js";
import { readFolderJson } from "../../folder/read.js";
import { writeFolderJson } from "../../folder/write.js";
import type { RunPaths } from "../../infra/paths.js";
import type { QueuedEntry } from "../read/queued.js";

// What holds a queued dispatch when the run's budget is spent, and again once it is not (specs/dispatch.md,
// "A run's budget"): queued.json and the marker say `budget` while the budget holds it, then what holds it
// after (its cap, an overlap), so that `status`, `show` and a person reading the folder see why it waits.
// Under the run's admission lock, inside promotion. Each dispatch is rewritten once per change: the
// marker's `blockedBy` says what its queued.json says, so nothing else is read.

/** A promotion as the marks see it: what it starts (`chosen`, by folder), the slots after it, its caps, when. */
export interface PromotionNow {
  chosen: ReadonlySet<string>;
  held: readonly Slot[];
  caps: Caps;
  nowMs: number;
}

/**
 * Marks the queued dispatches the run's budget now holds (`caps.spent`), or, once it no longer does, the
 * ones it held with what holds them now beside `held` (the slots after this promotion). `chosen` are
 * the ones this promotion starts: they are not marked.
 */
export function markBudgetHolds(
  run: RunPaths,
  waiting: readonly QueuedEntry[],
  promotion: PromotionNow,
): void {
  for (const { entry, blocked } of budgetMarksDue(waiting, promotion)) mark(run, entry, blocked);
}

/**
 * Which waiting dispatches get a new mark, and which: while the budget is spent, each not marked `budget`
 * yet gets it; once it is not, each still marked `budget` gets what holds it now (none: left as it is, for
 * the next promotion to start). The ones this promotion starts get none.
 */
export function budgetMarksDue<Q extends QueuedEntry>(
  waiting: readonly Q[],
  { chosen, held, caps, nowMs }: PromotionNow,
): { entry: Q; blocked: Blocked }[] {
  const due: { entry: Q; blocked: Blocked }[] = [];
  for (const entry of waiting) {
    const marked = entry.marker.queued?.blockedBy === "budget";
    // Spent: the ones not marked yet. Not spent: the ones still marked.
    if ((caps.spent !== null) === marked || chosen.has(entry.marker.dir)) continue;
    // A spent budget is what blockerOf names first.
    const blocked = blockerOf(entry, held, caps, nowMs);
    if (blocked !== null) due.push({ entry, blocked });
  }
  return due;
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
  writeLiveMarker(run, {
    ...stripSchema(q.marker),
    queued: { ...q.marker.queued, blockedBy: blocked.blockedBy },
  });
}

function stripSchema<T extends { schema: unknown }>(value: T): Omit<T, "schema"> {
  const { schema: _schema, ...rest } = value;
  return rest;
}
