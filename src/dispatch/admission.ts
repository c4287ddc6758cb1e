import type { Blocked, Caps, Slot } from "../domain/admission/admission-rules.js";
import { ownsOverlap } from "../domain/admission/owns.js";
import { CatherdError } from "../domain/errors.js";
import type { Crossing } from "../domain/spend/budget.js";
import type { BackendId, QueueBlocker } from "../domain/vocab.js";
import type { Clock } from "../infra/clock.js";
import { type RunPaths, runPaths } from "../infra/paths.js";
import { parkUntil } from "../quota/parked.js";
import { accountFileOf, startDecision } from "./admit/account-file.js";
import { underAdmissionLock } from "./admit/admission-lock.js";
import { type Asking, engineSightsOf, LiveSet } from "./admit/live-set.js";
import { ensureRunFile } from "./admit/remember-run.js";
import {
  type Committed,
  commitDispatch,
  discardStaged,
  queuedFile,
  type Staged,
  stageDispatch,
} from "./admit/stage.js";
import { planWorkplace } from "./admit/workplace.js";
import { refuseStaleFollowUp } from "./follow-up/under-lock.js";
import { discardPlans, planHandOvers } from "./queue/hand-over.js";
import { promoteUnderLock } from "./queue/promote.js";
import { runCapsUnderLock } from "./read/budget-left.js";
import { liveMarkersOf } from "./read/queued.js";
import type { DispatchRequest } from "./request/dispatch-request.js";

/** What parks a dispatch until a time rather than refusing it without --queue. */
const PARKING: ReadonlySet<QueueBlocker> = new Set(["window", "period-budget"]);

export { ADMISSION_LOCK_STALE_MS, ADMISSION_LOCK_WAIT_MS } from "./admit/admission-lock.js";

/** A dispatch admitted into its run, and what its admission left for the dispatcher to do. */
export interface Admitted extends Committed {
  /** Queued dispatches of the run promoted on the way: the dispatcher launches their supervisors too. */
  promoted: string[];
  /** Folders found dead or orphaned under the lock: a reader's duties, done once the lock is released. */
  withDuties: string[];
}

/**
 * Admission (specs/dispatch.md §2). Before the lock, and before anything is written, the workplace is
 * planned (git can take a while in a big tree; it describes the work tree, not the run; a --worktree git
 * refuses leaves nothing); then brief.md and spec.json are staged under a hidden name, and the chains due
 * for a hand-over are planned the same way. Under the run's lock, admission only judges and decides:
 * promote what the queue can start (oldest first, so that a newcomer never jumps the queue), refuse a
 * live duplicate name, refuse a dispatch into a run whose budget is spent (with `--queue` too: a spent
 * budget frees no slot by itself), and refuse — or with `--queue`, admit queued — a dispatch blocked by an
 * overlapping --owns, the run's cap or its backend's cap; else commit the folder. It never adopts and
 * never records: the dead and orphaned dispatches it finds are returned for the reader's duties. The
 * budget costs the lock nothing in a run without one, and in a run with one a sum of its ledger: the
 * dispatches not yet folded, not its history (folder/run-ledger.ts).
 */
export async function admit(request: DispatchRequest, home: string, clock: Clock): Promise<Admitted> {
  const { each, promoted, withDuties } = await admitAll([request], home, { clock });
  return { ...(each[0] as Committed), promoted, withDuties };
}

/** Several dispatches admitted by one decision (a race's attempts), and what that admission left to do. */
export interface AdmittedAll {
  /** Each dispatch's folder, in the order asked. */
  each: Committed[];
  promoted: string[];
  withDuties: string[];
}

/** How several dispatches are admitted together: the clock, and what is written just before their commit. */
export interface AdmitAllOptions {
  clock: Clock;
  /**
   * Called under the lock once every dispatch is judged admissible, before any folder is committed, with
   * each staged folder (a race's file names its attempts' ids); what it throws refuses them all.
   */
  beforeCommit?: (staged: readonly Staged[]) => void;
}

/**
 * Admits `requests` — all of one run — as one decision under the run's lock (specs/dispatch.md §2; a race,
 * "A race"): each is judged beside the slots held and those the ones before it take, and either all are
 * admitted (started, or queued where a cap or an overlap holds one and it asked for --queue; parked for a
 * window or a period's budget), or none is and nothing of any remains.
 */
export async function admitAll(
  requests: readonly DispatchRequest[],
  home: string,
  options: AdmitAllOptions,
): Promise<AdmittedAll> {
  const { clock } = options;
  const first = requests[0] as DispatchRequest;
  const run = runPaths(home, first.run);
  const stagedAll: Staged[] = [];
  let committed = false;
  try {
    for (const request of requests) {
      const workplace = await planWorkplace(request);
      stagedAll.push(stageDispatch(request, run, workplace, clock.wallNow()));
    }
    const planned = await planHandOvers(handOversMarked(run), clock);
    const sights = await engineSightsOf(run, clock);
    try {
      return await underAdmissionLock(run, async () => {
        const at = clock.wallNow();
        const runCaps = runCapsUnderLock(run, ensureRunFile(run, first, at), () => at.getTime());
        const live = new LiveSet(run, clock, sights);
        for (const request of requests) {
          refuseStaleFollowUp(request, live);
          refuseDuplicate(request, live);
        }
        const only = requests.length === 1 ? (stagedAll[0] as Staged) : null;
        const asking: Asking = only === null ? "all" : askingOf(first, only);
        const promotion = await promoteUnderLock(live, runCaps, { clock, planned, asking });
        if (promotion.caps.spent !== null) throw budgetRefusal(first, promotion.caps.spent);
        const decided = decideEach(requests, stagedAll, { slots: promotion.slots, caps: promotion.caps, at });
        options.beforeCommit?.(stagedAll);
        const each = decided.map((d, i) =>
          commitDispatch(
            run,
            stagedAll[i] as Staged,
            {
              queued: queuedFile(d.blocked, null, at),
              account: accountFileOf(home, d.backend, d.account, at),
            },
            at,
          ),
        );
        committed = true;
        for (const until of decided.map((d) => d.parkedUntil).filter(Number.isFinite)) {
          parkUntil(home, first.run, until);
        }
        return { each, promoted: promotion.toLaunch, withDuties: promotion.withDuties };
      });
    } finally {
      discardPlans(run, planned);
    }
  } finally {
    // Refused, or the lock never came: nothing of these dispatches remains.
    if (!committed) for (const staged of stagedAll) discardStaged(run, staged);
  }
}

/** One dispatch's start decision under the lock. */
interface Decided {
  backend: BackendId;
  blocked: Blocked | null;
  account: string | null;
  /** Parked until this time (ms), else NaN. */
  parkedUntil: number;
}

/**
 * Each dispatch judged in turn beside the slots held and those the ones before it take (`blockerOf`). One
 * blocked without --queue (by a cap or an overlap) refuses them all; out of window, or over a budget by
 * period, it waits for the time, asked to or not: parked, not refused (specs/quota.md).
 */
function decideEach(
  requests: readonly DispatchRequest[],
  stagedAll: readonly Staged[],
  state: { slots: readonly Slot[]; caps: Caps; at: Date },
): Decided[] {
  const slots = [...state.slots];
  return requests.map((request, i) => {
    const staged = stagedAll[i] as Staged;
    const asking = askingOf(request, staged);
    const candidate = { ...asking, notBefore: null, accounts: request.accounts, tags: request.tags };
    const { blocked, account } = startDecision(candidate, slots, state.caps, state.at.getTime());
    const parked = blocked !== null && PARKING.has(blocked.blockedBy);
    if (blocked !== null && !parked && !request.queue) throw refusal(request, staged, blocked, slots);
    if (blocked === null) {
      slots.push({
        name: staged.name,
        dispatchId: staged.dispatchId,
        ...asking,
        owns: [...asking.owns],
        account,
      });
    }
    const until = parked ? Date.parse(blocked?.blocker?.until ?? "") : Number.NaN;
    return { backend: asking.backend, blocked, account, parkedUntil: until };
  });
}

/** What a dispatch asks of the run's slots: its backend, its paths, the host its placement names. */
function askingOf(
  request: DispatchRequest,
  staged: Staged,
): { backend: BackendId; owns: string[]; host: string | null } {
  return {
    backend: request.backend.id,
    owns: staged.ownsAbsolute,
    host: staged.admit.placement?.target ?? null,
  };
}

/** The recorded attempts whose markers say a hand-over is due (checked again under the lock). */
function handOversMarked(run: RunPaths): string[] {
  return liveMarkersOf(run)
    .filter((m) => m.handover === true)
    .map((m) => m.dir);
}

/** A live dispatch — queued ones too — with the same name: E_ADMIT_DUPLICATE, with or without --queue. */
function refuseDuplicate(request: DispatchRequest, live: LiveSet): void {
  if (request.name === null) return;
  for (const same of live.markers.filter((m) => m.name === request.name)) {
    if (!live.isLive(same)) continue;
    throw new CatherdError(
      "E_ADMIT_DUPLICATE",
      `a dispatch named ${request.name} is still live (${same.dispatchId})`,
      {
        fix: `wait for it (catherd wait ${request.name}), cancel it (catherd cancel ${request.name}), or pick another --name`,
      },
    );
  }
}

/** E_RUN_BUDGET: the run's budget is spent; the fix raises it or removes it. */
function budgetRefusal(request: DispatchRequest, spent: Crossing): CatherdError {
  return new CatherdError("E_RUN_BUDGET", `${spent.message}: it admits nothing more`, {
    fix: `raise the run's budget (catherd dispatch … --run ${request.run} --run-budget tokens=<n>,usd=<n>,minutes=<n>, or none to remove it); catherd status --run ${request.run} shows its spend`,
  });
}

/**
 * The error for a dispatch blocked without --queue: it names the blocker and the way around it. An
 * overlap names our path as given and, when a symbolic link made it another, as resolved.
 */
function refusal(
  request: DispatchRequest,
  staged: Pick<Staged, "ownsAbsolute" | "ownsGiven">,
  blocked: Blocked,
  slots: readonly Slot[],
): CatherdError {
  const b = blocked.blocker ?? {};
  const queue = "add --queue to wait in the run's queue";
  if (blocked.blockedBy === "overlap") {
    const ours = b.owns ?? "";
    const given = staged.ownsGiven[staged.ownsAbsolute.indexOf(ours)] ?? ours;
    const named = given === ours ? ours : `${given} (${ours} once its links are followed)`;
    const theirs = slots.find((s) => s.dispatchId === b.dispatchId)?.owns.find((o) => ownsOverlap(o, ours));
    return new CatherdError(
      "E_ADMIT_OVERLAP",
      `--owns ${named} overlaps ${theirs ?? ours}, owned by live dispatch ${b.name} (${b.dispatchId})`,
      { fix: `wait for ${b.name} (catherd wait ${b.name}), narrow --owns, or ${queue}` },
    );
  }
  if (blocked.blockedBy === "host-cap") {
    return new CatherdError(
      "E_ADMIT_CAPACITY",
      `run ${request.run} is at its cap of ${b.cap} live dispatches on ${b.host}`,
      {
        fix: `wait for one to finish (catherd wait --any --run ${request.run}), raise --max-parallel-host ${b.host}=<n>, or ${queue}`,
      },
    );
  }
  if (blocked.blockedBy === "backend-cap") {
    return new CatherdError(
      "E_ADMIT_CAPACITY",
      `run ${request.run} is at its cap of ${b.cap} live ${b.backend} dispatches`,
      {
        fix: `wait for one to finish (catherd wait --any --run ${request.run}), raise --max-parallel-backend ${b.backend}=<n>, or ${queue}`,
      },
    );
  }
  return new CatherdError(
    "E_ADMIT_CAPACITY",
    `run ${request.run} is at its cap of ${b.cap} live dispatches`,
    {
      fix: `wait for one to finish (catherd wait --any --run ${request.run}), raise --max-parallel, or ${queue}`,
    },
  );
}
