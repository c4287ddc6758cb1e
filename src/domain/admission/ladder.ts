import type { DeclaredStatus } from "../ending/declared-outcome.js";
import type { BackendId, ErrorKind, Status } from "../vocab.js";

// The failover ladder (specs/dispatch.md, "The failover ladder"): what a chain of attempts does after one
// of them is recorded. Pure: the record writer asks it once and writes the answer into record.json
// (`next`), and the hand-over admits what it says.

/** One rung of `--fallback`: a backend, the model to ask of it (null: its default) and its executable. */
export interface Rung {
  backend: BackendId;
  model: string | null;
  /** Resolved when the chain was dispatched, so that every attempt runs what was checked then. */
  bin: string;
}

/** What an attempt knows of its chain's future (admit.json `ladder`). */
export interface LadderState {
  /** The rungs not yet tried, in order. */
  rungs: Rung[];
  /** `--retry-within`: the longest a provider's `retryAfter` may lie ahead for the same rung to be retried. */
  retryWithinMs: number | null;
  /** Timed retries of the current rung so far. */
  retries: number;
  /** Repair turns left for an answer that does not fit the dispatch's --answer-schema (--repair). */
  repairs: number;
  /** Repair turns left for a check (--verify) still red (--verify-repairs); absent: none. */
  checkRepairs?: number;
  /** Moves to another account of the pool so far (specs/quota.md, "A pool"); absent: none. */
  accountMoves?: number;
}

/** The step after an attempt: the attempt to admit next, and from when it may start. */
export interface NextStep {
  backend: BackendId;
  model: string | null;
  bin: string;
  /** ISO time before which the next attempt must not start (a timed retry), or null. */
  notBefore: string | null;
  why: "retry" | "failover" | "repair" | "account";
  /** The ladder as the next attempt carries it. */
  ladder: LadderState;
}

/** Timed retries of one rung at most: a provider that keeps naming a time soon cannot hold a chain forever. */
export const MAX_RETRIES_PER_RUNG = 3;

/**
 * The kinds another provider does not share: a quota, a rate limit or an outage (status `limit`), the
 * credentials (`auth`) and the model (`model`). Every other ending — a context overflow, a refused request,
 * the CLI's own failure, a timeout, a cancel, a lost dispatch, a cap on spending reached (`budget`, status
 * `limit` too: the chain's attempts share one budget) — another provider would not fix.
 */
const FAILOVER_KINDS: ReadonlySet<ErrorKind> = new Set([
  "quota",
  "rate-limit",
  "provider-down",
  "auth",
  "model",
]);

/** The attempt's own rung (backend, model, executable), its ladder, and how it ended. */
export interface Ended {
  rung: Rung;
  ladder: LadderState | null;
  status: Status;
  kind: ErrorKind | null;
  /** record.error.retryAfter: when the provider said to come back (ISO), or null. */
  retryAfter: string | null;
  /** When the attempt ended (ISO). */
  endedAt: string;
  /** The worker's declared outcome (`--outcome`), null when none; absent: none. */
  outcome?: DeclaredStatus | null;
  /** The thread (session) the attempt ran on, when its CLI can resume it; null: none to resume (folder/chain.ts). */
  thread: string | null;
  /** How many accounts the attempt's pool names (admit.json `accounts`); absent: one. */
  pool?: number;
}

/**
 * What a worker declares that another CLI would be told the same: it could not go on (`blocked`), or it
 * would not (`refused`). The brief is the same on every rung, so the chain ends there.
 */
const FINAL_DECLARATIONS: ReadonlySet<DeclaredStatus> = new Set(["blocked", "refused"]);

/**
 * The next attempt of a chain, or null when the chain ends here. A worker that declared itself blocked or
 * refused ends the chain whatever its ending: it would be told the same again. An answer that did not fit
 * its schema (`answer-invalid`), and a check still red (`verify`), is repaired on the same rung and thread
 * while repairs of its own kind are left and a thread is known; else that ends the chain (another provider would be asked the same thing). A window that
 * stopped it moves it to another account of its pool (accountStep). A rate limit that
 * names a time within
 * `retryWithinMs` of the end retries the same rung at that time (at most MAX_RETRIES_PER_RUNG times); else
 * an ending another provider would not share moves to the next rung; else the chain ends.
 */
export function nextStep(ended: Ended): NextStep | null {
  const { ladder, kind } = ended;
  if (ladder === null || kind === null || ended.status === "ok") return null;
  if (ended.outcome != null && FINAL_DECLARATIONS.has(ended.outcome)) return null;
  if (kind === "answer-invalid") return repairStep(ended, ladder);
  if (kind === "verify") return checkRepairStep(ended, ladder);
  if (!FAILOVER_KINDS.has(kind)) return null;
  const moved = accountStep(ended, ladder);
  if (moved !== null) return moved;
  if (kind === "rate-limit" && ended.retryAfter !== null && ladder.retryWithinMs !== null) {
    const waitMs = Date.parse(ended.retryAfter) - Date.parse(ended.endedAt);
    if (Number.isFinite(waitMs) && waitMs <= ladder.retryWithinMs && ladder.retries < MAX_RETRIES_PER_RUNG) {
      return {
        ...ended.rung,
        notBefore: waitMs > 0 ? ended.retryAfter : null,
        why: "retry",
        ladder: { ...ladder, retries: ladder.retries + 1 },
      };
    }
  }
  const [next, ...rest] = ladder.rungs;
  if (next === undefined) return null;
  return {
    ...next,
    notBefore: null,
    why: "failover",
    // A new rung starts its accounts afresh; the repairs left go with the chain.
    ladder: {
      rungs: rest,
      retryWithinMs: ladder.retryWithinMs,
      retries: 0,
      repairs: ladder.repairs,
      ...(ladder.checkRepairs === undefined ? {} : { checkRepairs: ladder.checkRepairs }),
    },
  };
}

/**
 * A window that stopped the attempt (a quota, or a rate limit with a time to come back) moves it to another
 * account of its pool on the same rung, at once — the account it ran on is held in the home until its reset
 * (specs/quota.md), so the pick gives another — once per other account of the pool; null otherwise.
 */
function accountStep(ended: Ended, ladder: LadderState): NextStep | null {
  const stoppedByWindow =
    ended.kind === "quota" || (ended.kind === "rate-limit" && ended.retryAfter !== null);
  const moves = ladder.accountMoves ?? 0;
  if (!stoppedByWindow || moves >= (ended.pool ?? 1) - 1) return null;
  return { ...ended.rung, notBefore: null, why: "account", ladder: { ...ladder, accountMoves: moves + 1 } };
}

/** One repair turn on the attempt's own rung and thread, counted off the repairs left; null: none possible. */
function repairStep(ended: Ended, ladder: LadderState): NextStep | null {
  if (ladder.repairs <= 0 || ended.thread === null) return null;
  return {
    ...ended.rung,
    notBefore: null,
    why: "repair",
    ladder: { ...ladder, retries: 0, repairs: ladder.repairs - 1 },
  };
}

/** One repair turn for a red check, on the attempt's own rung and thread; null: none left or none possible. */
function checkRepairStep(ended: Ended, ladder: LadderState): NextStep | null {
  const left = ladder.checkRepairs ?? 0;
  if (left <= 0 || ended.thread === null) return null;
  return {
    ...ended.rung,
    notBefore: null,
    why: "repair",
    ladder: { ...ladder, retries: 0, checkRepairs: left - 1 },
  };
}
