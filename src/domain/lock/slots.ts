// The queue of one lock class (specs/lock.md) as pure functions of its state: who holds a slot, who waits,
// in which order, and who may take one now. Whether a process still lives is a judgement passed in (the
// infra reads /proc); nothing here reads a clock or touches the world.

/** A process as a slot records it: enough for another process of the machine to tell whether it lives. */
export interface SlotProcess {
  pid: number;
  /** Its start time (Linux: ticks since boot); null when it could not be read. */
  startTime: string | null;
  /** The boot it ran in (Linux: /proc/sys/kernel/random/boot_id); null where there is none to read. */
  bootId: string | null;
  /** The machine it ran on: a home shared by two machines keeps one queue per machine. */
  host: string;
  /** Its pid namespace (`pid:[4026531836]`); null where there is none. Pids of another cannot be checked. */
  pidNs: string | null;
}

/** One taker of the class, waiting or holding. */
export interface SlotClaim {
  /** Unique to this claim: how its taker finds out that its own write was kept. */
  id: string;
  /** Its place in the queue: claims are served in ticket order. */
  ticket: number;
  /** The `catherd lock` process. */
  owner: SlotProcess;
  /** The command it runs once it holds a slot (the slot stays held while either lives); null before. */
  command: { pid: number; startTime: string | null } | null;
  /** The command line, as people read it ("npm test"). */
  label: string;
  /** How many slots this taker allows the class (its --slots, CATHERD_LOCK_SLOTS, or the default). */
  slots: number;
  /** When it asked (ISO). */
  askedAt: string;
  /** When it took its slot (ISO); null while it waits. */
  heldSince: string | null;
  /** The dispatch whose agent runs it, if any. */
  dispatch: { id: string; dir: string } | null;
}

/** The whole state of a class: every claim not yet released, holders first. */
export interface SlotState {
  /** The ticket the next claim gets: tickets only grow. */
  nextTicket: number;
  /** The count CATHERD_LOCK_SLOTS last gave a taker of this class; takers given none use it. */
  slots: number | null;
  holders: readonly SlotClaim[];
  waiters: readonly SlotClaim[];
}

export const EMPTY_SLOTS: SlotState = { nextTicket: 1, slots: null, holders: [], waiters: [] };

/**
 * What a taker can tell of a claim: `live` (it or its command runs, or it cannot be checked from here),
 * `dead` (provably gone: another boot, or neither process reads back by pid and start time), or `foreign`
 * (another machine's: neither counted nor removed).
 */
export type Judgement = "live" | "dead" | "foreign";
export type Judge = (claim: SlotClaim) => Judgement;

/** Where one claim stands, as its taker sees the queue. */
export interface QueueView {
  /** Live holders of this machine. */
  held: number;
  /** Live waiters of this machine, the claim itself included when it waits. */
  waiting: number;
  /** Live waiters before the claim; null when the claim holds a slot or is not in the queue. */
  ahead: number | null;
  /** Whether the claim holds a slot. */
  holds: boolean;
  /** Whether the claim is in the queue at all (waiting or holding). */
  present: boolean;
}

/** Whether a claim of the queue is this taker's. */
function isClaim(id: string) {
  return (claim: SlotClaim) => claim.id === id;
}

/** The state without the claims that are provably gone. */
export function withoutDead(state: SlotState, judge: Judge): SlotState {
  const alive = (claim: SlotClaim) => judge(claim) !== "dead";
  if (state.holders.every(alive) && state.waiters.every(alive)) return state;
  return { ...state, holders: state.holders.filter(alive), waiters: state.waiters.filter(alive) };
}

/** How the queue looks to claim `id`. */
export function viewOf(state: SlotState, id: string, judge: Judge): QueueView {
  const mine = (claim: SlotClaim) => judge(claim) === "live";
  const holders = state.holders.filter(mine);
  const waiters = [...state.waiters].filter(mine).sort((a, b) => a.ticket - b.ticket);
  const holds = state.holders.some(isClaim(id));
  const place = waiters.findIndex(isClaim(id));
  return {
    held: holders.length,
    waiting: waiters.length,
    ahead: holds || place === -1 ? null : place,
    holds,
    present: holds || state.waiters.some(isClaim(id)),
  };
}

/**
 * Whether claim `id` may take a slot now: it waits, and fewer than its `slots` are held by live claims and
 * the live waiters before it. First come, first served: a waiter never overtakes one that asked before.
 */
export function mayTake(state: SlotState, id: string, judge: Judge): boolean {
  const claim = state.waiters.find(isClaim(id));
  if (claim === undefined) return false;
  const view = viewOf(state, id, judge);
  return view.ahead !== null && view.held + view.ahead < claim.slots;
}

/**
 * A new claim joins the queue with the next ticket, and takes a slot at once when it may. `at` is when
 * (ISO); `remember` is a count from CATHERD_LOCK_SLOTS, kept for the takers given none.
 */
export function arrive(
  state: SlotState,
  claim: Omit<SlotClaim, "ticket" | "heldSince">,
  judge: Judge,
  { at, remember = null }: { at: string; remember?: number | null },
): SlotState {
  const joined: SlotState = {
    ...withoutDead(state, judge),
    nextTicket: state.nextTicket + 1,
    slots: remember ?? state.slots,
    waiters: [...state.waiters, { ...claim, ticket: state.nextTicket, heldSince: null }],
  };
  return take(joined, claim.id, judge, at) ?? withoutDead(joined, judge);
}

/**
 * Claim `id` takes a slot if it may, and the claims provably gone leave the queue on the way; null when
 * it may not (nothing to write).
 */
export function take(state: SlotState, id: string, judge: Judge, at: string): SlotState | null {
  const pruned = withoutDead(state, judge);
  if (!mayTake(pruned, id, judge)) return null;
  const claim = pruned.waiters.find(isClaim(id)) as SlotClaim;
  return {
    ...pruned,
    holders: [...pruned.holders, { ...claim, heldSince: at }],
    waiters: pruned.waiters.filter((c) => c.id !== id),
  };
}

/** The holder `id` names the command it started: its slot is held while that command lives too. */
export function started(state: SlotState, id: string, command: SlotClaim["command"]): SlotState {
  return { ...state, holders: state.holders.map((c) => (c.id === id ? { ...c, command } : c)) };
}

/** Claim `id` leaves the queue: a waiter gives up, or a holder releases its slot. */
export function leave(state: SlotState, id: string): SlotState {
  return {
    ...state,
    holders: state.holders.filter((c) => c.id !== id),
    waiters: state.waiters.filter((c) => c.id !== id),
  };
}

/** The count a taker uses: its own (--slots, else CATHERD_LOCK_SLOTS), else the class's, else the default. */
export function slotCount(own: number | null, state: SlotState, fallback: number): number {
  return own ?? state.slots ?? fallback;
}

/** The default count: half the cores, at least 1. */
export function defaultSlots(cores: number): number {
  return Math.max(1, Math.floor(cores / 2));
}
