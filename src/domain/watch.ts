import type { LineFacts } from "./facts.js";
import type { ExitReason } from "./vocab.js";

// The supervisor's rules (design.md §4, specs/supervisor.md) as pure functions of (state, facts, now).
// Times are milliseconds on a monotonic clock; nothing here reads a clock or touches the world.

/** The limits a dispatch is watched against, from spec.json. */
export interface WatchLimits {
  idleMs: number;
  wallMs: number;
  stallMs: number;
  graceAfterFinalMs: number | null;
  retryAttempts: number;
  retryWindowMs: number;
}

export interface OpenToolCall {
  id: string;
  label: string;
  openedAt: number;
}

export interface WatchState {
  startedAt: number;
  /** Start of the current quiet stretch: the last progress, or the last restart while busy. */
  quietSince: number;
  lastEventAt: number | null;
  openTools: readonly OpenToolCall[];
  consecutiveRetries: number;
  totalRetries: number;
  retryingSince: number | null;
  finalAt: number | null;
  stalled: boolean;
  thread: string | null;
}

export function initialWatch(now: number): WatchState {
  return {
    startedAt: now,
    quietSince: now,
    lastEventAt: null,
    openTools: [],
    consecutiveRetries: 0,
    totalRetries: 0,
    retryingSince: null,
    finalAt: null,
    stalled: false,
    thread: null,
  };
}

/** Applies one line's facts. A retry is never progress; any progress ends a retry streak. */
export function observe(state: WatchState, facts: LineFacts, now: number): WatchState {
  const next: WatchState = { ...state, lastEventAt: now };
  if (facts.thread !== undefined) next.thread = facts.thread;
  if (facts.retry !== undefined) {
    next.consecutiveRetries = state.consecutiveRetries + 1;
    next.totalRetries = state.totalRetries + 1;
    next.retryingSince = state.retryingSince ?? now;
  } else if (facts.progress) {
    next.quietSince = now;
    next.consecutiveRetries = 0;
    next.retryingSince = null;
  }
  if (facts.toolsOpened !== undefined && facts.toolsOpened.length > 0) {
    const known = new Set(next.openTools.map((t) => t.id));
    const opened = facts.toolsOpened.filter((t) => !known.has(t.id)).map((t) => ({ ...t, openedAt: now }));
    next.openTools = [...next.openTools, ...opened];
  }
  if (facts.toolsClosed !== undefined && facts.toolsClosed.length > 0) {
    const closed = new Set(facts.toolsClosed);
    next.openTools = next.openTools.filter((t) => !closed.has(t.id));
  }
  if (facts.final !== undefined && state.finalAt === null) next.finalAt = now;
  return next;
}

/** What the world told the loop since the last poll, besides the lines. */
export interface PollSignals {
  exited: boolean;
  cancelRequested: boolean;
}

export type Verdict =
  | { kind: "continue" }
  | { kind: "stall"; quietMs: number }
  | { kind: "stop"; reason: ExitReason };

/** Applies the rules in order; the first match wins. Returns the state to keep and what to do. */
export function decide(
  state: WatchState,
  signals: PollSignals,
  limits: WatchLimits,
  now: number,
): { state: WatchState; verdict: Verdict } {
  const stop = (reason: ExitReason) => ({ state, verdict: { kind: "stop", reason } as const });
  if (signals.exited) return stop("exited");
  if (signals.cancelRequested) return stop("cancelled");
  if (now - state.startedAt >= limits.wallMs) return stop("wall-timeout");
  if (
    state.finalAt !== null &&
    limits.graceAfterFinalMs !== null &&
    now - state.finalAt >= limits.graceAfterFinalMs
  ) {
    return stop("after-final");
  }
  if (
    state.consecutiveRetries >= limits.retryAttempts ||
    (state.retryingSince !== null && now - state.retryingSince >= limits.retryWindowMs)
  ) {
    return stop("provider-unavailable");
  }
  const busy = state.openTools.length > 0;
  const quietMs = now - state.quietSince;
  if (quietMs >= limits.idleMs) {
    if (!busy) return stop("idle-timeout");
    return { state: { ...state, quietSince: now }, verdict: { kind: "continue" } };
  }
  if (quietMs >= limits.stallMs && !busy && !state.stalled) {
    return { state: { ...state, stalled: true }, verdict: { kind: "stall", quietMs } };
  }
  return { state, verdict: { kind: "continue" } };
}

/**
 * The earliest time at which `decide` can change its mind without news — no line, no exit, no cancel:
 * the wall limit, the grace after a final answer, the retry window, the idle limit (which restarts the
 * quiet stretch of a busy agent) and the stall notice. The loop may sleep until then when nothing moves.
 */
export function nextDeadline(state: WatchState, limits: WatchLimits): number {
  let at = state.startedAt + limits.wallMs;
  if (state.finalAt !== null && limits.graceAfterFinalMs !== null) {
    at = Math.min(at, state.finalAt + limits.graceAfterFinalMs);
  }
  if (state.retryingSince !== null) at = Math.min(at, state.retryingSince + limits.retryWindowMs);
  at = Math.min(at, state.quietSince + limits.idleMs);
  if (state.openTools.length === 0 && !state.stalled) at = Math.min(at, state.quietSince + limits.stallMs);
  return at;
}
