import { defaultSlots, type SlotClaim } from "../domain/lock/slots.js";
import { isUnseen, judgeClaims } from "../infra/slot-identity.js";
import { readSlots, slotClassDir, slotClasses } from "../infra/slot-store.js";

// `catherd lock --status`: each class of the home, its slots, who holds them and who waits (specs/lock.md).
// Claims whose processes are gone are left out (their slots are free: the next taker drops them), and so
// are another machine's.

/** One claim as `--status` lists it. */
export interface ListedClaim {
  pid: number;
  command: string;
  /** The command's own pid once it runs (holders), else null. */
  commandPid: number | null;
  /** When it took its slot (holders) or asked for one (waiters). */
  since: string;
  /** How many slots this taker allows the class. */
  slots: number;
  dispatch: { id: string; dir: string } | null;
  /** A claim of another pid namespace: it cannot be checked from here, so it counts as live. */
  unchecked: boolean;
}

export interface ClassStatus {
  class: string;
  /**
   * The slots the class has now: the most any live holder's own count allows (a `--slots 2` holder makes
   * two), and at least `defaultSlots`.
   */
  slots: number;
  /** The count a taker given none uses: the one CATHERD_LOCK_SLOTS last gave, else half the cores. */
  defaultSlots: number;
  holders: ListedClaim[];
  waiters: ListedClaim[];
}

/** Every class of the home, or only `cls`, in name order. Throws what reading a queue throws. */
export function lockStatus(home: string, cls: string | null, cores: number): ClassStatus[] {
  const judge = judgeClaims();
  const classes = cls === null ? slotClasses(home) : [cls];
  const listed = (claims: readonly SlotClaim[]) =>
    claims
      .filter((claim) => judge(claim) === "live")
      .sort((a, b) => a.ticket - b.ticket)
      .map(listedClaim);
  return classes.map((name) => {
    const { state } = readSlots(slotClassDir(home, name));
    const given = state.slots ?? defaultSlots(cores);
    const holders = listed(state.holders);
    return {
      class: name,
      // Each taker counts by its own number: the holders' tell how many the class has now.
      slots: Math.max(given, ...holders.map((h) => h.slots)),
      defaultSlots: given,
      holders,
      waiters: listed(state.waiters),
    };
  });
}

function listedClaim(claim: SlotClaim): ListedClaim {
  return {
    pid: claim.owner.pid,
    command: claim.label,
    commandPid: claim.command?.pid ?? null,
    since: claim.heldSince ?? claim.askedAt,
    slots: claim.slots,
    dispatch: claim.dispatch,
    unchecked: isUnseen(claim.owner),
  };
}
