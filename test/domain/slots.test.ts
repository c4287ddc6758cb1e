import { describe, expect, it } from "vitest";
import {
  arrive,
  defaultSlots,
  EMPTY_SLOTS,
  type Judge,
  leave,
  mayTake,
  type SlotClaim,
  type SlotState,
  slotCount,
  started,
  take,
  viewOf,
  withoutDead,
} from "../../src/domain/lock/slots.js";

// The queue of a lock class as pure rules: first come, first served; at most a taker's count held; what
// is provably gone leaves; another machine's claims are carried, never counted.

const AT = "2026-12-01T10:00:00.000Z";

function claim(id: string, slots = 2, host = "here"): Omit<SlotClaim, "ticket" | "heldSince"> {
  return {
    id,
    owner: { pid: 100, startTime: "1", bootId: "b", host, pidNs: "pid:[1]" },
    command: null,
    label: `cmd ${id}`,
    slots,
    askedAt: AT,
    dispatch: null,
  };
}

/** A judge from a table: ids listed dead are dead, foreign ones foreign, the rest live. */
function judgeOf(dead: string[] = [], foreign: string[] = []): Judge {
  return (c) => (dead.includes(c.id) ? "dead" : foreign.includes(c.id) ? "foreign" : "live");
}

const live = judgeOf();

/** The state after each id arrives in turn. */
function queue(ids: string[], slots = 2, judge: Judge = live): SlotState {
  return ids.reduce((state, id) => arrive(state, claim(id, slots), judge, { at: AT }), EMPTY_SLOTS);
}

const names = (claims: readonly SlotClaim[]) => claims.map((c) => c.id);

describe("arrive", () => {
  it("gives tickets in order and takes a slot at once while fewer than its count are held", () => {
    const state = queue(["a", "b", "c", "d"]);
    expect(names(state.holders)).toEqual(["a", "b"]);
    expect(names(state.waiters)).toEqual(["c", "d"]);
    expect([...state.holders, ...state.waiters].map((c) => c.ticket)).toEqual([1, 2, 3, 4]);
    expect(state.nextTicket).toBe(5);
    expect(state.holders.map((c) => c.heldSince)).toEqual([AT, AT]);
    expect(state.waiters.map((c) => c.heldSince)).toEqual([null, null]);
  });

  it("never overtakes a waiter that asked first, even when its own count would let it in", () => {
    // b holds the one slot a and c allow; d allows 3 but waits behind c.
    let state = arrive(EMPTY_SLOTS, claim("a", 1), live, { at: AT });
    state = arrive(state, claim("c", 1), live, { at: AT });
    state = arrive(state, claim("d", 3), live, { at: AT });
    expect(names(state.holders)).toEqual(["a", "d"]);
    expect(names(state.waiters)).toEqual(["c"]);
    // With a, c waits with 0 ahead, d 1 ahead: the view of each.
    expect(viewOf(state, "c", live)).toMatchObject({ held: 2, waiting: 1, ahead: 0, holds: false });
    expect(mayTake(state, "c", live)).toBe(false);
  });

  it("remembers a count from CATHERD_LOCK_SLOTS for the takers given none", () => {
    const state = arrive(EMPTY_SLOTS, claim("a", 3), live, { at: AT, remember: 3 });
    expect(state.slots).toBe(3);
    expect(arrive(state, claim("b"), live, { at: AT }).slots).toBe(3);
    expect(slotCount(null, state, 1)).toBe(3);
    expect(slotCount(5, state, 1)).toBe(5);
    expect(slotCount(null, EMPTY_SLOTS, 1)).toBe(1);
  });

  it("drops the claims that are provably gone on the way in, and takes the slot they held", () => {
    const state = queue(["a", "b", "c"]);
    const after = arrive(state, claim("d"), judgeOf(["a", "c"]), { at: AT });
    expect(names(after.holders)).toEqual(["b", "d"]);
    expect(after.waiters).toEqual([]);
  });
});

describe("take", () => {
  const cases: {
    title: string;
    ids: string[];
    dead?: string[];
    foreign?: string[];
    who: string;
    takes: boolean;
  }[] = [
    { title: "the first waiter, once a holder has left", ids: ["b", "c", "d"], who: "c", takes: true },
    {
      title: "not the second waiter while only one slot is free",
      ids: ["b", "c", "d"],
      who: "d",
      takes: false,
    },
    {
      title: "the second waiter when the first is dead",
      ids: ["b", "c", "d"],
      dead: ["c"],
      who: "d",
      takes: true,
    },
    {
      title: "a waiter whose holders are all dead",
      ids: ["b", "c", "d"],
      dead: ["a", "b"],
      who: "d",
      takes: true,
    },
    {
      title: "a waiter past another machine's holders",
      ids: ["b", "c"],
      foreign: ["b"],
      who: "c",
      takes: true,
    },
    { title: "not a holder", ids: ["b", "c"], who: "b", takes: false },
    { title: "not a claim that is not there", ids: ["b"], who: "z", takes: false },
  ];
  for (const c of cases) {
    it(c.title, () => {
      // a holds and leaves (released) except where a case keeps it as a dead holder.
      let state = queue(["a", ...c.ids]);
      if (!(c.dead ?? []).includes("a")) state = leave(state, "a");
      const judge = judgeOf(c.dead, c.foreign);
      const taken = take(state, c.who, judge, "2026-12-01T10:01:00.000Z");
      expect(taken?.holders.some((h) => h.id === c.who) ?? false).toBe(c.takes);
      if (taken !== null) {
        // Never more live holders of this machine than the taker's count.
        expect(taken.holders.filter((h) => judge(h) === "live").length).toBeLessThanOrEqual(2);
        expect(taken.holders.find((h) => h.id === c.who)?.heldSince).toBe("2026-12-01T10:01:00.000Z");
      }
    });
  }

  it("never holds more than the count, and serves in ticket order whatever order the takers look in", () => {
    // Six takers with two slots; the waiters look last-come first, and a holder leaves each round.
    let state = queue(["a", "b", "c", "d", "e", "f"]);
    const served: string[] = [];
    for (let round = 0; round < 5; round++) {
      for (const who of ["f", "e", "d", "c"]) {
        const taken = take(state, who, live, AT);
        if (taken !== null) served.push(who);
        state = taken ?? state;
      }
      expect(state.holders.length).toBe(2);
      state = leave(state, state.holders[0]?.id ?? "");
    }
    expect(served).toEqual(["c", "d", "e", "f"]);
    expect(names(state.holders)).toEqual(["f"]);
  });
});

describe("viewOf, started, leave, withoutDead", () => {
  it("counts live claims of this machine only, the waiter itself among the waiting", () => {
    const state = queue(["a", "b", "c", "d", "e"]);
    const judge = judgeOf(["c"], ["a"]);
    expect(viewOf(state, "e", judge)).toEqual({ held: 1, waiting: 2, ahead: 1, holds: false, present: true });
    expect(viewOf(state, "b", judge)).toEqual({
      held: 1,
      waiting: 2,
      ahead: null,
      holds: true,
      present: true,
    });
    expect(viewOf(state, "z", judge)).toMatchObject({ present: false, holds: false, ahead: null });
  });

  it("names the holder's command, and leaves a claim out wherever it is", () => {
    let state = queue(["a", "b", "c"]);
    state = started(state, "a", { pid: 4242, startTime: "9" });
    expect(state.holders[0]?.command).toEqual({ pid: 4242, startTime: "9" });
    expect(names(leave(state, "a").holders)).toEqual(["b"]);
    expect(names(leave(state, "c").waiters)).toEqual([]);
  });

  it("keeps the same state when nothing is dead, and another machine's claims always", () => {
    const state = queue(["a", "b", "c"]);
    expect(withoutDead(state, judgeOf([], ["a"]))).toBe(state);
    expect(names(withoutDead(state, judgeOf(["b", "c"])).holders)).toEqual(["a"]);
  });

  it("halves the cores for the default count, at least 1", () => {
    expect([1, 2, 3, 8, 64].map(defaultSlots)).toEqual([1, 1, 1, 4, 32]);
  });
});
