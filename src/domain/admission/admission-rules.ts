import {
  type AccountGate,
  type AccountWindow,
  accountGate,
  pickAccount,
  soonestReset,
} from "../quota/gate.js";
import { accountsFree, type BudgetStanding, heldBy } from "../quota/period-budget.js";
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
  /** The account it runs on (specs/quota.md); absent or null: none chosen (`exec`, or not known). */
  account?: string | null | undefined;
  /** The host its placement names (an engine's target, `ssh:HOST`); absent or null: none. */
  host?: string | null | undefined;
}

/** The accounts a dispatch may run on, and the headroom it keeps in their windows (specs/quota.md). */
export interface AccountAsk {
  /** The account names it may run on, in the order given: one when pinned. */
  pool: string[];
  /** `--window-headroom`: no start into a window used this many percent or more. */
  headroomPercent: number;
}

/** A dispatch asking to start: a new one at admission, or a queued one at promotion. */
export interface Candidate {
  backend: BackendId;
  owns: string[];
  /** Not to start before this time (ms since the epoch), or null. */
  notBefore: number | null;
  /** Its accounts; absent or null: it runs on none (`exec`), and no window holds it. */
  accounts?: AccountAsk | null | undefined;
  /** Its `--tag`s: the budgets by tag that count it (specs/quota.md). */
  tags?: readonly string[] | undefined;
  /** The host its placement names (an engine's target); absent or null: none, so no host cap holds it. */
  host?: string | null | undefined;
  /**
   * Its host did not answer when it was to start: not tried again before `until` (ms), `reason` its
   * engine's words. Absent or null: nothing known against its host.
   */
  unanswered?: { until: number; reason: string } | null | undefined;
}

/**
 * The run's caps: live dispatches in all, and per backend (run.json); and its budget's crossing when its
 * spend has reached it (run-budget.ts `runCrossing`): then nothing starts.
 */
export interface Caps {
  maxParallel: number | null;
  perBackend: Partial<Record<BackendId, number>>;
  /** `--max-parallel-host box=2`: live dispatches per host their placements name. */
  perHost: Readonly<Record<string, number>>;
  /** The limit of `--run-budget` the run's spend has reached, or null: the budget is not spent (or none). */
  spent: Crossing | null;
  /**
   * The windows of the accounts the dispatches asking may run on, by `accountKey` (absent: none known, so
   * none holds them): read from the home by the caller.
   */
  windows?: ReadonlyMap<string, readonly AccountWindow[]> | undefined;
  /**
   * The home's budgets by period spent in their current period (period-budget.ts `standings`), read by
   * the caller; absent or empty: none holds anything.
   */
  periods?: readonly BudgetStanding[] | undefined;
}

/** The key of an account in `Caps.windows`: its CLI and its name. */
export function accountKey(backend: BackendId, account: string): string {
  return `${backend}/${account}`;
}

/** What holds a dispatch back, as queued.json names it. */
export interface Blocked {
  blockedBy: QueueBlocker;
  blocker: {
    name?: string;
    dispatchId?: string;
    owns?: string;
    backend?: BackendId;
    /** With `host-cap`: the host at its cap; with `host`: the host that did not answer. */
    host?: string;
    /** With `host`: the engine's words. */
    reason?: string;
    cap?: number;
    /** With `budget`: the limit of the run's budget reached, and how much of it was used. */
    budget?: "tokens" | "usd" | "minutes";
    limit?: number;
    used?: number;
    /** With `window`: the accounts held (their names, joined by commas), and the window that frees first. */
    accounts?: string;
    window?: string;
    usedPercent?: number | null;
    /**
     * With `window`: when the first of its accounts frees (ISO), null when none frees by itself; with
     * `period-budget`: when the period ends.
     */
    until?: string | null;
    /** With `period-budget`: the budget's scope and period (`budget`, `limit`, `used`: its measure). */
    scope?: string;
    period?: "day" | "week" | "month";
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
    perHost: runFile?.maxParallelHost ?? {},
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
 * run's budget spent, then a time not yet come, then a budget by period spent, then its accounts out of
 * window, then its host silent, then an overlapping `--owns`, then the run's cap, then its backend's cap,
 * then its host's.
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
  const period = periodBlocked(candidate, caps);
  if (period !== null) return period;
  const account = accountFor(candidate, live, caps, nowMs);
  if (account !== undefined && account.account === null) return windowBlocked(candidate, account);
  const unanswered = candidate.unanswered ?? null;
  if (unanswered !== null && nowMs < unanswered.until) {
    const until = new Date(unanswered.until).toISOString();
    const host = candidate.host ?? "";
    return { blockedBy: "host", blocker: { host, reason: unanswered.reason, until } };
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
  return hostCapBlocked(candidate, live, caps);
}

/** What queued.json says of a dispatch whose host has as many live dispatches as its cap, or null. */
function hostCapBlocked(candidate: Candidate, live: readonly Slot[], caps: Caps): Blocked | null {
  const host = candidate.host ?? null;
  const cap = host === null ? undefined : caps.perHost[host];
  if (host === null || cap === undefined) return null;
  if (live.filter((s) => s.host === host).length < cap) return null;
  return { blockedBy: "host-cap", blocker: { host, cap } };
}

/** What the pick of accounts said: the account chosen, or none with when the first frees. */
type AccountPick = ReturnType<typeof pickAccount>;

/**
 * The account `candidate` would run on beside `live`, by its pool's windows (gate.ts `pickAccount`);
 * undefined when it asks for none.
 */
export function accountFor(
  candidate: Candidate,
  live: readonly Slot[],
  caps: Caps,
  nowMs: number,
): AccountPick | undefined {
  const ask = candidate.accounts;
  if (ask === undefined || ask === null || ask.pool.length === 0) return undefined;
  const spent = caps.periods ?? [];
  // An account whose budget by period is spent is not picked (periodBlocked holds a pool of only those).
  const pool = spent.length === 0 ? ask.pool : accountsFree(spent, candidate.backend, ask.pool);
  const members = pool.map((name) => {
    const windows = caps.windows?.get(accountKey(candidate.backend, name)) ?? [];
    const gate: AccountGate = accountGate(windows, ask.headroomPercent, nowMs);
    const onIt = live.filter((s) => s.backend === candidate.backend && s.account === name).length;
    return { name, gate, live: onIt, soonestReset: soonestReset(windows, nowMs) };
  });
  return pickAccount(members);
}

/** What queued.json says of a dispatch a spent budget by period holds, or null when none does. */
function periodBlocked(candidate: Candidate, caps: Caps): Blocked | null {
  const spent = caps.periods ?? [];
  if (spent.length === 0) return null;
  const held = heldBy(spent, {
    backend: candidate.backend,
    tags: candidate.tags ?? [],
    pool: candidate.accounts?.pool ?? null,
  });
  if (held === null || held.spent === null) return null;
  return {
    blockedBy: "period-budget",
    blocker: {
      scope: held.budget.scope,
      period: held.budget.per,
      budget: held.spent.measure,
      limit: held.spent.limit,
      used: Math.round(held.spent.used * 1e4) / 1e4,
      until: new Date(held.span.endMs).toISOString(),
    },
  };
}

/** What queued.json says of a dispatch whose accounts are all out of window. */
function windowBlocked(candidate: Candidate, pick: Extract<AccountPick, { account: null }>): Blocked {
  return {
    blockedBy: "window",
    blocker: {
      backend: candidate.backend,
      accounts: (candidate.accounts?.pool ?? []).join(","),
      window: pick.window === null ? "" : `${pick.window.limit}/${pick.window.window}`.replace(/^\//, ""),
      usedPercent: pick.window?.usedPercent ?? null,
      until: pick.until === null ? null : new Date(pick.until).toISOString(),
    },
  };
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
): Chosen<Q>[] {
  if (caps.spent !== null) return [];
  const taken: Slot[] = [...live];
  const chosen: Chosen<Q>[] = [];
  for (const q of queued) {
    if (caps.maxParallel !== null && taken.length >= caps.maxParallel) break;
    if (blockerOf(q, taken, caps, nowMs) !== null) continue;
    const pick = accountFor(q, taken, caps, nowMs);
    const account = pick?.account ?? null;
    chosen.push({ entry: q, account });
    taken.push({ ...q, account });
  }
  return chosen;
}

/** A queued dispatch chosen to start, with the account it starts on (null: it asks for none). */
export interface Chosen<Q> {
  entry: Q;
  account: string | null;
}
