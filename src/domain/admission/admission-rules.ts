import type { RunFile } from "../schemas.js";
import type { Crossing } from "../spend/budget.js";
import type { BackendId, QueueBlocker } from "../vocab.js";
import { firstOverlap } from "./owns.js";

// Whether a dispatch may start now, and which queued dispatches start when slots free (specs/dispatch.md,
// "Admission" and "The queue"). Pure: the callers read the run's live dispatches under its admission lock
// and act on the answer.

/** A dispatch that holds a slot of the run: admitted and not recorded, and not waiting in the queue. */
export interface Slot {
  name: string;
  dispatchId: string;
  backend: BackendId | null;
  owns: string[];
}

/** A dispatch asking to start: a new one at admission, or a queued one at promotion. */
export interface Candidate {
  backend: BackendId;
  owns: string[];
  /** Not to start before this time (ms since the epoch), or null. */
  notBefore: number | null;
}

/**
 * The run's caps: live dispatches in all, and per backend (run.json); and its budget's crossing when its
 * spend has reached it (run-budget.ts `runCrossing`): then nothing starts.
 */
export interface Caps {
  maxParallel: number | null;
  perBackend: Partial<Record<BackendId, number>>;
  /** The limit of `--run-budget` the run's spend has reached, or null: the budget is not spent (or none). */
  spent: Crossing | null;
}

/** What holds a dispatch back, as queued.json names it. */
export interface Blocked {
  blockedBy: QueueBlocker;
  blocker: {
    name?: string;
    dispatchId?: string;
    owns?: string;
    backend?: BackendId;
    cap?: number;
    /** With `budget`: the limit of the run's budget reached, and how much of it was used. */
    budget?: "tokens" | "usd" | "minutes";
    limit?: number;
    used?: number;
  } | null;
}

/**
 * The caps remembered for the run in run.json (none when it is missing or unreadable), with `spent`: the
 * crossing of its budget its caller worked out from the run's ledger (null: not spent).
 */
export function capsOf(runFile: RunFile | null, spent: Crossing | null = null): Caps {
  return {
    maxParallel: runFile?.maxParallel ?? null,
    perBackend: runFile?.maxParallelBackend ?? {},
    spent,
  };
}

/** What queued.json says of a run whose budget is spent. */
export function budgetBlocked(spent: Crossing): Blocked {
  const budget = spent.cap === "run-usd" ? "usd" : spent.cap === "run-minutes" ? "minutes" : "tokens";
  return {
    blockedBy: "budget",
    blocker: { budget, limit: spent.limit, used: Math.round(spent.used * 1e4) / 1e4 },
  };
}

/** The path of `candidate` that `slot` also owns (owns.ts), or null: how overlapping `--owns` is judged. */
export function ownsConflict(
  candidate: { readonly owns: readonly string[] },
  slot: { readonly owns: readonly string[] },
): string | null {
  return firstOverlap(candidate.owns, slot.owns);
}

/**
 * Whether `candidate` may start beside the `live` slots: null when it may, else what blocks it — first the
 * run's budget spent, then a time not yet come, then an overlapping `--owns`, then the run's cap, then its
 * backend's cap.
 */
export function blockerOf(
  candidate: Candidate,
  live: readonly Slot[],
  caps: Caps,
  nowMs: number,
): Blocked | null {
  if (caps.spent !== null) return budgetBlocked(caps.spent);
  if (candidate.notBefore !== null && nowMs < candidate.notBefore) {
    return { blockedBy: "not-before", blocker: null };
  }
  for (const slot of live) {
    const owns = ownsConflict(candidate, slot);
    if (owns !== null) {
      return { blockedBy: "overlap", blocker: { name: slot.name, dispatchId: slot.dispatchId, owns } };
    }
  }
  if (caps.maxParallel !== null && live.length >= caps.maxParallel) {
    return { blockedBy: "capacity", blocker: { cap: caps.maxParallel } };
  }
  const backendCap = caps.perBackend[candidate.backend];
  if (backendCap !== undefined && live.filter((s) => s.backend === candidate.backend).length >= backendCap) {
    return { blockedBy: "backend-cap", blocker: { backend: candidate.backend, cap: backendCap } };
  }
  return null;
}

/** A queued dispatch, as promotion sees it. */
export interface Queued extends Candidate, Slot {
  backend: BackendId;
}

/**
 * Which queued dispatches start now, in the order given (oldest first): each in turn starts if nothing
 * blocks it beside the live slots and those chosen before it. One that is blocked does not hold back a
 * later one that is free (a different backend, paths nobody holds); once the run is full, nothing more
 * can start and the walk stops — so its cost is bounded by the slots free, not by the queue's length. A
 * run whose budget is spent starts nothing.
 */
export function choosePromotions<Q extends Queued>(
  queued: Iterable<Q>,
  live: readonly Slot[],
  caps: Caps,
  nowMs: number,
): Q[] {
  if (caps.spent !== null) return [];
  const taken: Slot[] = [...live];
  const chosen: Q[] = [];
  for (const q of queued) {
    if (caps.maxParallel !== null && taken.length >= caps.maxParallel) break;
    if (blockerOf(q, taken, caps, nowMs) !== null) continue;
    chosen.push(q);
    taken.push(q);
  }
  return chosen;
}
