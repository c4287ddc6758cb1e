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
} from "../domain/slots.js";
import type { Clock } from "../infra/clock.js";
import { readSlots, updateSlots, watchSlots } from "../infra/slot-store.js";
import { type WakeSource, waitUntil } from "../infra/wait-until.js";

// Taking a slot of a class: join its queue, wait for the turn, take it (specs/lock.md, "Waiting"). The
// wait wakes when a new version of the queue appears (fs.watch) — a release, a taker ahead going — and
// otherwise looks again at a slow poll, for what changes no file: a holder SIGKILLed, a machine whose
// folder cannot be watched. A waiter that a holder's death could let in looks every FAST_POLL_MS, the
// others every SLOW_POLL_MS.

/** How often a waiter next in line looks at the holders (a holder's death writes nothing). */
export const FAST_POLL_MS = 250;
/** How often the other waiters look; the queue moving wakes them sooner. */
export const SLOW_POLL_MS = 2000;

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
  let fast = true;
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
      fast = (view.ahead ?? 0) < taker.claim.slots;
      return undefined;
    },
    {
      clock,
      deadline: options.waitMs === null ? Number.POSITIVE_INFINITY : askedAt + options.waitMs,
      pollMs: () => (fast ? FAST_POLL_MS : SLOW_POLL_MS),
      watch: both(watchSlots(taker.dir), onAbort(options.interrupt)),
    },
  );
  if (answer?.kind === "took") return answer;
  await leaveQueue(taker);
  return answer ?? { kind: "busy", view };
}

/** The claim leaves the queue (a waiter giving up, a holder releasing its slot). */
export async function leaveQueue(taker: Pick<Taker, "dir" | "cls" | "claim" | "clock">): Promise<void> {
  const id = taker.claim.id;
  await updateSlots(
    taker.dir,
    taker.cls,
    (state) => leave(state, id),
    (state) => !state.holders.some((c) => c.id === id) && !state.waiters.some((c) => c.id === id),
    taker.clock,
  );
}

function join(taker: Taker): Promise<SlotState> {
  const { claim, judge } = taker;
  return updateSlots(
    taker.dir,
    taker.cls,
    (state) => arrive(state, claim, judge, taker.clock.wallNow().toISOString(), taker.remember),
    (state) => viewOf(state, claim.id, judge).present,
    taker.clock,
  );
}

function takeNow(taker: Taker): Promise<SlotState> {
  const { claim, judge } = taker;
  return updateSlots(
    taker.dir,
    taker.cls,
    (state) => take(state, claim.id, judge, taker.clock.wallNow().toISOString()),
    (state) => viewOf(state, claim.id, judge).holds,
    taker.clock,
  );
}

/** A wake source that fires when `signal` aborts. */
function onAbort(signal: AbortSignal): WakeSource {
  return (wake) => {
    signal.addEventListener("abort", wake);
    return () => signal.removeEventListener("abort", wake);
  };
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
