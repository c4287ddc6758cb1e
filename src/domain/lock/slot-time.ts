import type { WatchState } from "../watch/watch.js";

// Heavy slots as the supervisor's rules see them (specs/supervisor.md, "Heavy slots"): a `catherd lock` of
// the dispatch waiting for a slot, or running its command, is busy, as an open tool call is; and the time
// spent waiting for a slot is not the agent's: it counts against neither the idle limit nor the wall.

/** What the dispatch's locks report at a poll (their reports in the folder, each checked alive). */
export interface SlotSignals {
  /** At least one lock of the dispatch waits for a slot. */
  waiting: boolean;
  /** At least one lock of the dispatch runs its command. */
  running: boolean;
  /**
   * When the earliest of those waiting began to wait (the loop's clock, from the lock's own report);
   * null or absent: when this poll saw it.
   */
  waitingSince?: number | null;
}

export const NO_SLOTS: SlotSignals = { waiting: false, running: false };

/**
 * Applies what the locks report at `now`. A wait is counted from when its lock began to wait (as its
 * report says, never before the dispatch started nor after `now`) to the poll that sees it over; the end of all slot activity is news, as a tool call's result is: the quiet stretch
 * starts again then, so that an agent just handed its command's result is not judged idle for the time
 * its command took.
 */
export function observeSlots(state: WatchState, signals: SlotSignals, now: number): WatchState {
  const busy = signals.waiting || signals.running;
  let next = state;
  if (signals.waiting && state.slotWaitSince === null) {
    const since = Math.min(now, Math.max(state.startedAt, signals.waitingSince ?? now));
    next = { ...next, slotWaitSince: since };
  }
  if (!signals.waiting && state.slotWaitSince !== null) {
    next = { ...next, slotWaitSince: null, slotWaitedMs: state.slotWaitedMs + (now - state.slotWaitSince) };
  }
  if (busy !== state.slotBusy) next = { ...next, slotBusy: busy };
  if (state.slotBusy && !busy) next = { ...next, quietSince: Math.max(next.quietSince, now) };
  return next;
}

/** How long the dispatch has waited for slots in all by `now`: the closed waits and the one open. */
export function slotWaitedMs(state: WatchState, now: number): number {
  return state.slotWaitedMs + (state.slotWaitSince === null ? 0 : Math.max(0, now - state.slotWaitSince));
}

/**
 * When the wall limit falls due: `wallMs` of time not spent waiting for a slot. Never while a lock
 * waits (the wall stands still), so Infinity then.
 */
export function wallDueAt(state: WatchState, wallMs: number): number {
  if (state.slotWaitSince !== null) return Number.POSITIVE_INFINITY;
  return state.startedAt + wallMs + state.slotWaitedMs;
}
