import {
  arrive,
  type Judge,
  leave,
  mayTake,
  type QueueView,
  type SlotClaim,
  type SlotState,
  take,
  viewOf,
} from "../domain/lock/slots.js";
import type { Clock } from "../infra/clock.js";
import { readSlots, updateSlots, watchSlots } from "../infra/slot-store.js";
import { type WakeSource, waitUntil } from "../infra/wait-until.js";

// Taking a slot of a class: join its queue, wait for the turn, take it (specs/lock.md, "Waiting"). A
// waiter near its turn (fewer than twice its count ahead) wakes when a new version of the queue appears
// (fs.watch) — a release, a taker ahead going — and looks every NEAR_POLL_MS besides, for what changes no
// file: a holder SIGKILLed, a folder that cannot be watched. One further back looks every FAR_POLL_MS and
// ignores the versions: more than its count must go before its turn, and a crowd of waiters each reading
// every version of the queue would cost the machine more than the commands they wait to run.

/** How often a waiter near its turn looks at the holders (a holder's death writes nothing). */
export const NEAR_POLL_MS = 250;
/** How often a waiter further back looks. */
export const FAR_POLL_MS = 500;

/** One taker of a class. */
export interface Taker {
  dir: string;
  cls: string;
  claim: Omit<SlotClaim, "ticket" | "heldSince">;
  /** A count from CATHERD_LOCK_SLOTS, remembered in the class. */
  remember: number | null;
  judge: Judge;
  clock: Clock;
}

export type Taken =
  | { kind: "took"; waitedMs: number }
  | { kind: "busy"; view: QueueView }
  | { kind: "interrupted" };

export interface TakeOptions {
  /** Give up after this long (ms); null: never. */
  waitMs: number | null;
  /** Ends the wait (a signal); the claim leaves the queue. */
  interrupt: AbortSignal;
  /** Called once the claim waits, and again whenever the queue ahead of it changes. */
  onView: (view: QueueView) => void;
}

/**
 * Joins the queue and waits until the claim holds a slot, the wait is interrupted, or `waitMs` passes; in
 * the last two cases the claim has left the queue when this resolves.
 */
export async function takeSlot(taker: Taker, options: TakeOptions): Promise<Taken> {
  const { clock } = taker;
  const askedAt = clock.now();
  let state = await join(taker);
  let view = viewOf(state, taker.claim.id, taker.judge);
  if (view.holds) return { kind: "took", waitedMs: 0 };
  options.onView(view);
  let near = true;
  const answer = await waitUntil<Taken>(
    async () => {
      if (options.interrupt.aborted) return { kind: "interrupted" };
      state = readSlots(taker.dir).state;
      if (!viewOf(state, taker.claim.id, taker.judge).present) state = await join(taker);
      if (mayTake(state, taker.claim.id, taker.judge)) {
        state = await takeNow(taker);
        if (viewOf(state, taker.claim.id, taker.judge).holds) {
          return { kind: "took", waitedMs: Math.round(clock.now() - askedAt) };
        }
      }
      const now = viewOf(state, taker.claim.id, taker.judge);
      if (now.ahead !== view.ahead || now.held !== view.held || now.waiting !== view.waiting) {
        view = now;
        options.onView(view);
      }
      near = (view.ahead ?? 0) < 2 * taker.claim.slots;
      return undefined;
    },
    {
      clock,
      deadline: options.waitMs === null ? Number.POSITIVE_INFINITY : askedAt + options.waitMs,
      pollMs: () => (near ? NEAR_POLL_MS : FAR_POLL_MS),
      watch: both(
        onlyWhile(() => near, watchSlots(taker.dir)),
        onAbort(options.interrupt),
      ),
    },
  );
  if (answer?.kind === "took") return answer;
  await leaveQueue(taker);
  return answer ?? { kind: "busy", view };
}

/** The claim leaves the queue (a waiter giving up, a holder releasing its slot). */
export function leaveQueue(taker: Pick<Taker, "dir" | "cls" | "claim" | "clock">): Promise<SlotState> {
  const id = taker.claim.id;
  return change(
    taker,
    (state) => leave(state, id),
    (state) => !state.holders.some((c) => c.id === id) && !state.waiters.some((c) => c.id === id),
  );
}

/** The claim joins the queue, taking a slot at once when it may. */
function join(taker: Taker): Promise<SlotState> {
  const { claim, judge } = taker;
  return change(
    taker,
    (state) =>
      arrive(state, claim, judge, { at: taker.clock.wallNow().toISOString(), remember: taker.remember }),
    (state) => viewOf(state, claim.id, judge).present,
  );
}

/** The claim takes its slot if it still may. */
function takeNow(taker: Taker): Promise<SlotState> {
  const { claim, judge } = taker;
  return change(
    taker,
    (state) => take(state, claim.id, judge, taker.clock.wallNow().toISOString()),
    (state) => viewOf(state, claim.id, judge).holds,
  );
}

/** One change of the taker's queue (slot-store.ts: made until `done` holds of the newest version). */
export function change(
  taker: Pick<Taker, "dir" | "cls" | "clock">,
  next: (state: SlotState) => SlotState | null,
  done: (state: SlotState) => boolean,
): Promise<SlotState> {
  return updateSlots(taker, next, done);
}

/** A wake source that fires when `signal` aborts. */
function onAbort(signal: AbortSignal): WakeSource {
  return (wake) => {
    signal.addEventListener("abort", wake);
    return () => signal.removeEventListener("abort", wake);
  };
}

/** A wake source that wakes only while `wanted()` holds. */
function onlyWhile(wanted: () => boolean, source: WakeSource): WakeSource {
  return (wake) =>
    source(() => {
      if (wanted()) wake();
    });
}

function both(a: WakeSource, b: WakeSource): WakeSource {
  return (wake) => {
    const stopA = a(wake);
    const stopB = b(wake);
    return () => {
      stopA();
      stopB();
    };
  };
}
