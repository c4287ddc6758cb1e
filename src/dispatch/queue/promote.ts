import * as fs from "node:fs";
import {
  type Caps,
  type Chosen,
  choosePromotions,
  type Slot,
} from "../../domain/admission/admission-rules.js";
import { handOverPending } from "../../folder/chain.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { writeLiveMarker } from "../../folder/markers.js";
import { settleRaceOf } from "../../folder/race-standing.js";
import { readFolderJson } from "../../folder/read.js";
import { readRunFile } from "../../folder/run-file.js";
import { createFolderJson, writeFolderJson } from "../../folder/write.js";
import type { Clock } from "../../infra/clock.js";
import { hostIdentity } from "../../infra/host-identity.js";
import { okValue } from "../../infra/json-file.js";
import type { RunPaths } from "../../infra/paths.js";
import { startTimeOf } from "../../infra/process-identity.js";
import { setParked } from "../../quota/parked.js";
import { accountFileOf } from "../admit/account-file.js";
import { underAdmissionLock } from "../admit/admission-lock.js";
import { type Asking, engineSightsOf, LiveSet } from "../admit/live-set.js";
import { type RunCapsUnderLock, runCapsUnderLock } from "../read/budget-left.js";
import { type DispatchView, inspectDispatch } from "../read/inspect.js";
import { type QueuedEntry, queueOrder } from "../read/queued.js";
import { endCancelledWhileQueued, recordDead } from "../settle/settle.js";

import type { StandbySupervisor } from "../start/standby.js";
import { discardPlans, handOverUnderLock, type PlannedHandOver, planHandOvers } from "./hand-over.js";
import { markHolds } from "./hold-marks.js";
import { launchOrRequeue } from "./requeue.js";

// The queue of a run (specs/dispatch.md §7). No daemon keeps it: whoever touches the run — a dispatcher, a
// supervisor that has just written its record (through the promoter program), any command that reads the
// run — takes the admission lock, starts the oldest queued dispatches that nothing blocks, and lets the
// lock go. A queued dispatch is started once: it is chosen under the lock and marked by promoted.json,
// created exclusively, before its supervisor is launched; its supervisor's own lock is the last guard.

/** What a promotion did under the lock, for its caller to finish once the lock is released. */
export interface Promoted {
  /** The slots held afterwards, judged for who asked (an admission that follows decides by them). */
  slots: Slot[];
  /** Folders whose supervisors the caller launches, once the lock is released. */
  toLaunch: string[];
  /** Folders found dead or orphaned on the way: the reader's duties, done after the lock. */
  withDuties: string[];
  /** Due hand-overs that were not planned before the lock: planned, then promoted, again. */
  unplanned: string[];
  /** The caps the last decision was made by, its budget's crossing summed after the slots were counted. */
  caps: Caps;
}

/** What a promotion under the lock decides by, besides the live set and the run's caps. */
export interface PromotionInputs {
  clock: Clock;
  /** The due hand-overs planned outside the lock (git, the staging writes). */
  planned: ReadonlyMap<string, PlannedHandOver>;
  /**
   * Who will decide by the slots returned (an admission), so that only the markers that could refuse it
   * are read; "all" by default.
   */
  asking?: Asking;
  /** Start only dispatches an engine runs (and hand over only their chains): the promoter of an engine's job. */
  placedOnly?: boolean;
}

/**
 * Under the admission lock (held by the caller): hands over the chains that are due (those planned
 * outside the lock), then chooses the queued dispatches that start now and marks each promoted. A queued
 * dispatch whose `cancel` file exists is ended cancelled instead of started (its exit.json), and left
 * among `withDuties` to be recorded after the lock.
 */
export async function promoteUnderLock(
  given: LiveSet,
  runCaps: RunCapsUnderLock,
  inputs: PromotionInputs,
): Promise<Promoted> {
  const handedOver = await handOverChains(given, runCaps, inputs);
  const live = handedOver.live;
  const withDuties = new Set(given.withDuties());
  const capsNow = async (): Promise<Caps> => ({ ...runCaps.caps, spent: await runCaps.spentNow() });
  // The live set's duties are those of the folders it has inspected, so they are taken last.
  const finish = (slots: Slot[], toLaunch: string[], caps: Caps): Promoted => ({
    slots,
    toLaunch,
    withDuties: [...new Set([...withDuties, ...live.withDuties()])],
    unplanned: handedOver.unplanned,
    caps,
  });
  if (!live.hasQueue) {
    const { slots, stranded } = live.slotsAndStranded(inputs.asking ?? "all", runCaps.caps);
    if (stranded.length === 0) return finish(slots, handedOver.started, await capsNow());
  }
  const { slots, stranded } = live.slotsAndStranded("all", runCaps.caps);
  // The budget after the slots: a dispatch whose record freed one had its spend in the ledger first.
  const caps = await capsNow();
  const state = { slots, stranded, caps, at: inputs.clock.wallNow() };
  const chosen = chooseQueued(live, state, inputs.placedOnly === true);
  const marked = markPromoted(live.run, chosen, state, inputs.clock);
  for (const dir of marked.cancelled) withDuties.add(dir);
  return finish([...slots, ...marked.held], [...handedOver.started, ...marked.toLaunch], caps);
}

/** The queue as promotion judges it: the slots held, the promotions whose promoter died, the caps, now. */
interface QueueState {
  slots: Slot[];
  stranded: QueuedEntry[];
  caps: Caps;
  at: Date;
}

/**
 * The queued (and stranded) dispatches that start now, oldest first, with the account each starts on; the
 * holds of those left waiting marked (the budget, a window), and the home told when the first window frees. A promoter inside an engine's job starts only what an engine runs: a local supervisor
 * started on a compute node would end with the job (specs/placement.md, "A run that mixes placements").
 */
function chooseQueued(live: LiveSet, state: QueueState, placedOnly: boolean): Chosen<QueuedEntry>[] {
  const waiting = live.waiting();
  const queue = [...waiting, ...state.stranded]
    .filter((q) => !placedOnly || q.marker.engine !== undefined)
    .sort(queueOrder);
  const now = state.at.getTime();
  const chosen = choosePromotions(queue, state.slots, state.caps, now);
  const chosenDirs = new Set(chosen.map((c) => c.entry.marker.dir));
  const parkedUntil = markHolds(live.run, waiting, {
    chosen: chosenDirs,
    held: [...state.slots, ...chosen.map((c) => ({ ...c.entry, account: c.account }))],
    caps: state.caps,
    nowMs: now,
  });
  setParked(live.run.home, live.run.run, parkedUntil);
  return chosen;
}

/**
 * Marks each chosen dispatch promoted at `state.at` (promoted.json, its live marker no longer queued) and
 * returns those to launch; one whose `cancel` file exists is ended cancelled instead, never started. A
 * stranded promotion (its promoter died before the supervisor came) is taken over; a fresh one is created
 * exclusively, so a promoter that somehow raced past the lock cannot promote it twice.
 */
function markPromoted(
  run: RunPaths,
  chosen: readonly Chosen<QueuedEntry>[],
  state: QueueState,
  clock: Clock,
): { held: QueuedEntry[]; toLaunch: string[]; cancelled: string[] } {
  const held: QueuedEntry[] = [];
  const toLaunch: string[] = [];
  const cancelled: string[] = [];
  const strandedDirs = new Set(state.stranded.map((q) => q.marker.dir));
  for (const { entry: q, account } of chosen) {
    const dir = q.marker.dir;
    // A race's attempt: its race settled first, so that a loser of a decided race is ended, not started.
    settleRaceOf(dir, state.at);
    if (fs.existsSync(fileIn(dir, FILES.cancel))) {
      // Ended here, never started; recorded after the lock, with the other duties.
      endCancelledWhileQueued(dir, clock);
      cancelled.push(dir);
      continue;
    }
    const promoted = {
      at: state.at.toISOString(),
      by: { pid: process.pid, startTime: startTimeOf(process.pid), host: hostIdentity() },
    };
    if (strandedDirs.has(dir)) writeFolderJson(dir, FILES.promoted, promoted);
    else if (!createFolderJson(dir, FILES.promoted, promoted)) continue;
    // Its supervisor is launched after the lock, and reads which account it runs on first.
    const chosenAccount = accountFileOf(run.home, q.backend, account, state.at);
    if (chosenAccount !== null) {
      const { schema: _schema, ...body } = chosenAccount;
      writeFolderJson(dir, FILES.account, body);
    }
    const { queued: _queued, schema: _schema, ...rest } = q.marker;
    writeLiveMarker(run, { ...rest, ...(account === null ? {} : { account }) });
    held.push({ ...q, account });
    toLaunch.push(dir);
  }
  return { held, toLaunch, cancelled };
}

/**
 * First in every promotion: the chains whose last attempt was recorded with a `next` are handed over
 * (queue/hand-over.ts), so that a next attempt takes its place in the queue before anything is chosen.
 * Returns the live set as it is afterwards, the attempts admitted to start now, and the due hand-overs
 * not planned.
 */
async function handOverChains(
  live: LiveSet,
  runCaps: RunCapsUnderLock,
  { clock, planned, placedOnly = false }: PromotionInputs,
): Promise<{ live: LiveSet; started: string[]; unplanned: string[] }> {
  const due = [...new Set([...live.pendingHandOvers(), ...planned.keys()])].filter(
    (dir) => !placedOnly || isPlaced(dir),
  );
  if (due.length === 0) return { live, started: [], unplanned: [] };
  const started: string[] = [];
  const unplanned: string[] = [];
  let current = live;
  for (const dir of due) {
    const plan = planned.get(dir);
    if (plan === undefined) {
      unplanned.push(dir);
      continue;
    }
    const { slots } = current.slotsAndStranded("all", runCaps.caps);
    const caps = { ...runCaps.caps, spent: await runCaps.spentNow() };
    const toLaunch = await handOverUnderLock(current.run, plan, { slots, caps }, clock);
    if (toLaunch !== null) started.push(toLaunch);
    current = new LiveSet(current.run, clock, current.sights);
  }
  return { live: current, started, unplanned };
}

/**
 * Starts the supervisors of promoted dispatches, at once. One that does not come up is recorded `lost` by
 * launchSupervisor, one whose host did not answer goes back to the queue; the others go on.
 */
export async function launchPromoted(
  dirs: readonly string[],
  standby: StandbySupervisor | null,
  clock: Clock,
): Promise<void> {
  await Promise.all(
    dirs.map((dir, i) =>
      launchOrRequeue(dir, { standby: i === 0 ? standby : null, clock }).catch(() => null),
    ),
  );
}

/** How many times a promotion plans hand-overs it found due under the lock, and promotes again. */
const PLANNING_ROUNDS = 3;

/**
 * Promotion as any process that touches a run does it: nothing when the run has nothing queued and no
 * chain due (its live markers say so, and `due` names the recorded attempts the caller found due by their
 * folders: the `handover` mark on a marker is best effort); else the due hand-overs are planned outside the
 * lock (git, the staging writes), then promoted under it, then the launches. Returns the folders that
 * need a reader's duty (dispatch/reader.ts does them).
 */
export async function promoteRun(
  run: RunPaths,
  {
    clock,
    standby = null,
    due = [],
    placedOnly = false,
  }: {
    clock: Clock;
    standby?: StandbySupervisor | null;
    due?: readonly string[];
    /** Start only dispatches an engine runs (and hand over only their chains): the promoter of an engine's job. */
    placedOnly?: boolean;
  },
): Promise<{ launched: number; withDuties: string[] }> {
  let launched = 0;
  const withDuties = new Set<string>();
  let dueNow = [...due];
  for (let round = 0; round < PLANNING_ROUNDS; round++) {
    const live = new LiveSet(run, clock);
    const chains = [...new Set([...live.pendingHandOvers(), ...dueNow.filter(isHandOverDue)])].filter(
      (dir) => !placedOnly || isPlaced(dir),
    );
    if (!live.hasQueue && chains.length === 0) break;
    const planned = await planHandOvers(chains, clock);
    const sights = await engineSightsOf(run, clock);
    let promoted: Promoted;
    try {
      promoted = await underAdmissionLock(run, async () =>
        promoteUnderLock(
          new LiveSet(run, clock, sights),
          runCapsUnderLock(run, readRunFile(run), () => clock.wallNow().getTime()),
          { clock, planned, placedOnly },
        ),
      );
    } finally {
      discardPlans(run, planned);
    }
    await launchPromoted(promoted.toLaunch, round === 0 ? standby : null, clock);
    launched += promoted.toLaunch.length;
    for (const dir of promoted.withDuties) withDuties.add(dir);
    if (promoted.unplanned.length === 0) break;
    dueNow = promoted.unplanned;
  }
  return { launched, withDuties: [...withDuties] };
}

/** Whether an engine runs the dispatch of `dir` (admit.json `placement`): its chain's attempts too. */
function isPlaced(dir: string): boolean {
  return okValue(readFolderJson(dir, FILES.admit))?.placement !== undefined;
}

/** Whether the attempt recorded in `dir` still has its chain's hand-over to do (its folder says so). */
function isHandOverDue(dir: string): boolean {
  return handOverPending(dir, okValue(readFolderJson(dir, FILES.record)));
}

/**
 * `cancel` of a queued dispatch: under the admission lock, so that it is either still queued and ended
 * cancelled there (its exit.json) — never started — or already promoted, and then cancelled as any live
 * dispatch is. Its record is written once the lock is released. Returns the view after, or null when it
 * was no longer queued.
 */
export async function cancelQueued(run: RunPaths, dir: string, clock: Clock): Promise<DispatchView | null> {
  const ended = await underAdmissionLock(run, async () => {
    if (inspectDispatch(dir, { clock }).state !== "queued") return false;
    endCancelledWhileQueued(dir, clock);
    // The last one waiting took the run's parked time with it: the home's waker need not wait for it.
    if (new LiveSet(run, clock).waiting().length === 0) setParked(run.home, run.run, null);
    return true;
  });
  return ended ? recordDead(inspectDispatch(dir, { clock }), clock) : null;
}
