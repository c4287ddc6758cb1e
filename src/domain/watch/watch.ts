import { REFUSAL_KINDS } from "../ending/failure.js";
import { slotWaitedMs, wallDueAt } from "../lock/slot-time.js";
import type { Crossing } from "../spend/budget.js";
import type { ErrorKind, ExitReason } from "../vocab.js";
import type { LineFacts } from "./facts.js";

// The supervisor's rules (specs/supervisor.md, "The loop") as pure functions of (state, facts, now).
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
  /** What the last provider retry said (`rate-limit`, `provider-down`, …); null before any retry. */
  retryKind: ErrorKind | null;
  /** A kind that will not heal, proven by a line: the dispatch ends now with it (rule 5). */
  refusal: ErrorKind | null;
  /** The message of the last context overflow, to tell the same one coming again. */
  lastOverflow: string | null;
  /** The CLI went on (a progress line) since that overflow: the same one again is a loop. */
  overflowAgain: boolean;
  finalAt: number | null;
  stalled: boolean;
  thread: string | null;
  /** Since when a lock of the dispatch has waited for a heavy slot (null: none waits); see slot-time.ts. */
  slotWaitSince: number | null;
  /** Time spent waiting for heavy slots in the waits that are over. */
  slotWaitedMs: number;
  /** A lock of the dispatch waits for a slot or runs its command: busy, as an open tool call. */
  slotBusy: boolean;
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
    retryKind: null,
    refusal: null,
    lastOverflow: null,
    overflowAgain: false,
    finalAt: null,
    stalled: false,
    thread: null,
    slotWaitSince: null,
    slotWaitedMs: 0,
    slotBusy: false,
  };
}

/**
 * Applies one line's facts. A retry is never progress; any progress ends a retry streak. A retry whose
 * status says auth or quota, or the same context overflow again after the CLI went on, is a refusal that
 * will not heal.
 */
export function observe(state: WatchState, facts: LineFacts, now: number): WatchState {
  const next: WatchState = { ...state, lastEventAt: now };
  if (facts.thread !== undefined) next.thread = facts.thread;
  if (facts.retry !== undefined) {
    next.consecutiveRetries = state.consecutiveRetries + 1;
    next.totalRetries = state.totalRetries + 1;
    next.retryingSince = state.retryingSince ?? now;
    next.retryKind = facts.retry.kind;
    if (REFUSAL_KINDS.has(facts.retry.kind)) next.refusal ??= facts.retry.kind;
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
  // A turn that ended runs nothing of its own any more, though its CLI may never close a tool call it
  // interrupted (codex's app-server): left open, it would keep the dispatch busy, past every idle limit.
  if (facts.turn?.running === false) next.openTools = [];
  if (facts.error?.kind === "context") {
    // The same overflow again after the CLI went on (compacted, started a step): it loops on it. Printed
    // twice in a row (an error line, then the turn's failure) it is one overflow.
    if (state.overflowAgain && facts.error.message === state.lastOverflow) next.refusal ??= "context";
    next.lastOverflow = facts.error.message;
    next.overflowAgain = false;
  } else if (facts.progress && state.lastOverflow !== null) {
    next.overflowAgain = true;
  }
  // The CLI goes on after a final (opencode's compacted session), or took a message that starts its next
  // turn (steering): that final is no longer the last word.
  if (facts.continues === true || facts.taken !== undefined) next.finalAt = null;
  if (facts.final !== undefined && next.finalAt === null) next.finalAt = now;
  return next;
}

/**
 * A steerable dispatch's conversation (specs/steering.md), as the rules need it. Its CLI never exits by
 * itself (its input stays open), so the end is the rules' call: when a turn has ended with nothing held
 * (no message queued, none taken and not yet acted on, no question open) and its keep-open window is over.
 */
export interface SteerSignals {
  /** The last turn ended and nothing is held. */
  ended: boolean;
  /** A question the CLI asked waits for its answer: busy, as an open tool call, never idle. */
  asking: boolean;
  /** Since when the ended turn waits for a message (--keep-open); null: it does not wait. */
  waitingSince: number | null;
  /** Time spent waiting for messages in the waits that are over: not wall time. */
  waitedMs: number;
  keepOpenMs: number | null;
  /** When the first open question is answered by its policy (monotonic); null: none is open. */
  questionDueAt: number | null;
  /**
   * When the CLI was asked to end its session, the conversation being over (null: not yet; absent: its
   * protocol cannot be asked, and it is stopped then). It exits by itself, else is stopped after the
   * grace after a final.
   */
  endRequestedAt?: number | null;
}

/** What the world told the loop since the last poll, besides the lines. */
export interface PollSignals {
  exited: boolean;
  cancelRequested: boolean;
  /** A cap on spending the usage so far has reached (budget.ts `crossing`); null or absent: none. */
  budget?: Crossing | null;
  /** A steerable dispatch's conversation; absent: not steerable. */
  steer?: SteerSignals;
}

/** The time a steerable dispatch spent waiting for messages, the current wait included. */
function inputWaitedMs(steer: SteerSignals | undefined, now: number): number {
  if (steer === undefined) return 0;
  return steer.waitedMs + (steer.waitingSince === null ? 0 : now - steer.waitingSince);
}

/** Whether a steerable dispatch's keep-open window is over (or it has none): its ended turn is the end. */
function steerDone(steer: SteerSignals, now: number): boolean {
  if (!steer.ended) return false;
  if (steer.keepOpenMs === null || steer.waitingSince === null) return true;
  return now - steer.waitingSince >= steer.keepOpenMs;
}

/**
 * What to do. A stop names its exit reason and, when the provider's words decided it, the error kind:
 * `provider-unavailable` with `auth`, `quota`, `context` (a refusal) or the last retry's kind;
 * `idle-timeout` or `exited` with the last retry's kind when a retry was the last sign of life; else null.
 */
export type Verdict =
  | { kind: "continue" }
  | { kind: "stall"; quietMs: number }
  | { kind: "stop"; reason: ExitReason; errorKind: ErrorKind | null };

/** Applies the rules in order; the first match wins. Returns the state to keep and what to do. */
export function decide(
  state: WatchState,
  signals: PollSignals,
  limits: WatchLimits,
  now: number,
): { state: WatchState; verdict: Verdict } {
  const stop = (reason: ExitReason, errorKind: ErrorKind | null = null) => ({
    state,
    verdict: { kind: "stop", reason, errorKind } as const,
  });
  // Exited while a provider retry was the last sign of life: the retry's kind is the best account of it.
  if (signals.exited) return stop("exited", state.retryingSince === null ? null : state.retryKind);
  if (signals.cancelRequested) return stop("cancelled");
  // A cap reached while the agent works; once its final answer stands the work is done, and the record
  // shows what the last report used.
  if (signals.budget != null && state.finalAt === null) return stop("budget", "budget");
  // The wall counts the time not spent waiting for a heavy slot, nor for a message.
  const steer = signals.steer;
  if (now - state.startedAt - slotWaitedMs(state, now) - inputWaitedMs(steer, now) >= limits.wallMs) {
    return stop("wall-timeout");
  }
  // Steerable: a final ends a turn, not the dispatch; the conversation's end is (SteerSignals).
  if (steer !== undefined) {
    if (steerDone(steer, now)) {
      const asked = steer.endRequestedAt;
      if (asked === undefined) return stop("after-final");
      if (asked !== null && now - asked >= (limits.graceAfterFinalMs ?? 0)) return stop("after-final");
    }
  } else if (
    state.finalAt !== null &&
    limits.graceAfterFinalMs !== null &&
    now - state.finalAt >= limits.graceAfterFinalMs
  ) {
    return stop("after-final");
  }
  if (state.refusal !== null) return stop("provider-unavailable", state.refusal);
  if (
    state.consecutiveRetries >= limits.retryAttempts ||
    (state.retryingSince !== null && now - state.retryingSince >= limits.retryWindowMs)
  ) {
    return stop("provider-unavailable", state.retryKind ?? "provider-down");
  }
  // Waiting for a message, or for the answer to a question, is neither idle nor a stall.
  const waiting = steer !== undefined && (steer.asking || steer.waitingSince !== null);
  const busy = state.openTools.length > 0 || state.slotBusy || waiting;
  const quietMs = now - state.quietSince;
  if (quietMs >= limits.idleMs) {
    // Quiet since a provider retry: the silence was the provider's, and it may heal later.
    if (!busy) return stop("idle-timeout", state.retryingSince === null ? null : state.retryKind);
    return { state: { ...state, quietSince: now }, verdict: { kind: "continue" } };
  }
  if (quietMs >= limits.stallMs && !busy && !state.stalled) {
    return { state: { ...state, stalled: true }, verdict: { kind: "stall", quietMs } };
  }
  return { state, verdict: { kind: "continue" } };
}

/**
 * The earliest time at which `decide` can change its mind without news — no line, no exit, no cancel:
 * the wall limit (standing still while a lock waits for a heavy slot), the grace after a final answer, the retry window, the idle limit (which restarts the
 * quiet stretch of a busy agent) and the stall notice; the time of the line that made a stop due (a
 * refusal, a full retry count). The loop may sleep until then when nothing moves.
 */
export function nextDeadline(state: WatchState, limits: WatchLimits, steer?: SteerSignals): number {
  // A refusal or a full retry count ends the dispatch at the next decision, whatever the time.
  if (state.refusal !== null || state.consecutiveRetries >= limits.retryAttempts) {
    return state.lastEventAt ?? state.startedAt;
  }
  let at = wallDueAt(state, limits.wallMs) + (steer === undefined ? 0 : steer.waitedMs);
  if (steer !== undefined) {
    // Waiting for a message: the wall stands still, and the window's end is the deadline.
    if (steer.waitingSince !== null) at = Number.POSITIVE_INFINITY;
    if (steer.waitingSince !== null && steer.keepOpenMs !== null) at = steer.waitingSince + steer.keepOpenMs;
    if (steer.endRequestedAt != null) {
      at = Math.min(at, steer.endRequestedAt + (limits.graceAfterFinalMs ?? 0));
    } else if (steer.ended && steer.keepOpenMs === null) {
      at = Math.min(at, state.lastEventAt ?? state.startedAt);
    }
    if (steer.questionDueAt !== null) at = Math.min(at, steer.questionDueAt);
  } else if (state.finalAt !== null && limits.graceAfterFinalMs !== null) {
    at = Math.min(at, state.finalAt + limits.graceAfterFinalMs);
  }
  if (state.retryingSince !== null) at = Math.min(at, state.retryingSince + limits.retryWindowMs);
  // Waiting for a message or an answer is never idle: no idle deadline, no stall.
  const waiting = steer !== undefined && (steer.asking || steer.waitingSince !== null);
  if (waiting) return at;
  at = Math.min(at, state.quietSince + limits.idleMs);
  const busy = state.openTools.length > 0 || state.slotBusy;
  if (!busy && !state.stalled) at = Math.min(at, state.quietSince + limits.stallMs);
  return at;
}
