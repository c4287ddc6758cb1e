import { describe, expect, it } from "vitest";
import { holdMarksDue, type PromotionNow } from "../../src/dispatch/queue/hold-marks.js";
import type { QueuedEntry } from "../../src/dispatch/read/queued.js";
import type { Caps, Slot } from "../../src/domain/admission/admission-rules.js";
import { periodAt } from "../../src/domain/quota/period.js";
import { type PeriodBudget, standings } from "../../src/domain/quota/period-budget.js";
import type { Crossing } from "../../src/domain/spend/budget.js";
import type { QueueBlocker } from "../../src/domain/vocab.js";

const NOW = Date.parse("2026-12-06T10:00:00Z");
const SPENT: Crossing = { cap: "run-tokens", limit: 1000, used: 1200, message: "1,200 tokens of 1,000" };
const OPEN: Caps = { maxParallel: 1, perBackend: {}, perHost: {}, spent: null };

/** A queued dispatch `name`, its marker saying `blockedBy` (undefined: no mark yet). */
function queued(name: string, blockedBy?: QueueBlocker, notBefore: number | null = null): QueuedEntry {
  const since = "2026-12-06T09:00:00Z";
  return {
    name,
    dispatchId: `20261206T090000Z-${name.padEnd(6, "0")}`,
    backend: "codex",
    owns: [],
    notBefore,
    since,
    marker: {
      schema: 1,
      dispatchId: `20261206T090000Z-${name.padEnd(6, "0")}`,
      name,
      dir: `/runs/r/dispatches/${name}/x`,
      owns: [],
      queued: { since, notBefore: null, ...(blockedBy === undefined ? {} : { blockedBy }) },
    },
  };
}

const running: Slot = { name: "busy", dispatchId: "20261206T080000Z-busy00", backend: "codex", owns: [] };

function due(waiting: QueuedEntry[], promotion: Partial<PromotionNow>): [string, QueueBlocker][] {
  const now: PromotionNow = { chosen: new Set(), held: [], caps: OPEN, nowMs: NOW, ...promotion };
  return holdMarksDue(waiting, now).marks.map(({ entry, blocked }) => [entry.name, blocked.blockedBy]);
}

describe("the budget's marks on the queue", () => {
  it.each([
    {
      title: "a spent budget marks each waiting dispatch not marked budget yet",
      waiting: [queued("a"), queued("b", "capacity"), queued("c", "budget")],
      promotion: { caps: { ...OPEN, spent: SPENT } },
      marks: [
        ["a", "budget"],
        ["b", "budget"],
      ],
    },
    {
      title: "a budget no longer spent gives each still marked budget what holds it now",
      waiting: [queued("a", "budget"), queued("b", "capacity")],
      promotion: { held: [running] },
      marks: [["a", "capacity"]],
    },
    {
      title: "one still marked budget that nothing holds now keeps its mark, for promotion to start",
      waiting: [queued("a", "budget")],
      promotion: {},
      marks: [],
    },
    {
      title: "one not before a later time is marked so once the budget lets go",
      waiting: [queued("a", "budget", NOW + 60_000)],
      promotion: {},
      marks: [["a", "not-before"]],
    },
    {
      title: "the ones this promotion starts are never marked",
      waiting: [queued("a"), queued("b", "budget")],
      promotion: { caps: { ...OPEN, spent: SPENT }, chosen: new Set(["/runs/r/dispatches/a/x"]) },
      marks: [],
    },
  ])("$title", ({ waiting, promotion, marks }) => {
    expect(due(waiting, promotion)).toEqual(marks);
  });

  it("marks a spent budget with its limit and what was used", () => {
    const [mark] = holdMarksDue([queued("a")], {
      chosen: new Set(),
      held: [],
      caps: { ...OPEN, spent: SPENT },
      nowMs: NOW,
    }).marks;
    expect(mark?.blocked).toEqual({
      blockedBy: "budget",
      blocker: { budget: "tokens", limit: 1000, used: 1200 },
    });
  });
});

describe("an account's window's marks on the queue (specs/quota.md)", () => {
  const reset = NOW + 3_600_000;
  const spent = {
    limit: "codex",
    window: "primary",
    usedPercent: 100,
    windowMinutes: 300,
    resetsAt: new Date(reset).toISOString(),
    seenAt: new Date(NOW - 60_000).toISOString(),
    status: null,
  };
  const held: Caps = { ...OPEN, maxParallel: 5, windows: new Map([["codex/default", [spent]]]) };
  const onDefault = (entry: QueuedEntry): QueuedEntry => ({
    ...entry,
    accounts: { pool: ["default"], headroomPercent: 95 },
  });

  it("marks one a spent window holds, with its reset, and says when the first frees", () => {
    const { marks, parkedUntil } = holdMarksDue([onDefault(queued("a", "capacity"))], {
      chosen: new Set(),
      held: [],
      caps: held,
      nowMs: NOW,
    });
    expect(marks.map((m) => [m.entry.name, m.blocked.blockedBy, m.blocked.blocker?.until])).toEqual([
      ["a", "window", new Date(reset).toISOString()],
    ]);
    expect(parkedUntil).toBe(reset);
  });

  it("leaves one already marked with the same reset as it is, and still counts its time", () => {
    const entry = onDefault(queued("a", "window"));
    if (entry.marker.queued !== undefined) entry.marker.queued.until = new Date(reset).toISOString();
    const { marks, parkedUntil } = holdMarksDue([entry], {
      chosen: new Set(),
      held: [],
      caps: held,
      nowMs: NOW,
    });
    expect(marks).toEqual([]);
    expect(parkedUntil).toBe(reset);
  });

  it("gives one marked window what holds it once the window has let go", () => {
    const { marks } = holdMarksDue([onDefault(queued("a", "window"))], {
      chosen: new Set(),
      held: [running],
      caps: { ...OPEN, windows: new Map() },
      nowMs: NOW,
    });
    expect(marks.map((m) => m.blocked.blockedBy)).toEqual(["capacity"]);
  });

  it("counts a timed retry's time in the run's parked time, without marking it", () => {
    const { marks, parkedUntil } = holdMarksDue([queued("r", "not-before", NOW + 5000)], {
      chosen: new Set(),
      held: [],
      caps: OPEN,
      nowMs: NOW,
    });
    expect(marks).toEqual([]);
    expect(parkedUntil).toBe(NOW + 5000);
  });
});

describe("a budget by period's marks on the queue", () => {
  const today = periodAt("day", NOW);
  const home: PeriodBudget = { scope: "home", per: "day", usd: 5, tokens: null, minutes: null };
  const entry = {
    backend: "codex" as const,
    account: null,
    tags: [],
    atMs: NOW - 1000,
    usd: 5,
    tokens: 0,
    minutes: 0,
  };
  const spentCaps: Caps = { ...OPEN, periods: standings([home], [entry], NOW) };

  it("marks each waiting dispatch period-budget, and parks the run until the period ends", () => {
    const { marks, parkedUntil } = holdMarksDue([queued("a"), queued("b", "capacity")], {
      chosen: new Set(),
      held: [],
      caps: spentCaps,
      nowMs: NOW,
    });
    expect(
      marks.map(({ entry, blocked }) => [entry.name, blocked.blockedBy, blocked.blocker?.until]),
    ).toEqual([
      ["a", "period-budget", new Date(today.endMs).toISOString()],
      ["b", "period-budget", new Date(today.endMs).toISOString()],
    ]);
    expect(parkedUntil).toBe(today.endMs);
  });

  it("gives one marked period-budget what holds it once the period has turned", () => {
    const next = today.endMs;
    const caps: Caps = { ...OPEN, periods: standings([home], [entry], next).filter((s) => s.spent !== null) };
    expect(caps.periods).toEqual([]);
    const { marks, parkedUntil } = holdMarksDue([queued("a", "period-budget")], {
      chosen: new Set(),
      held: [running],
      caps,
      nowMs: next,
    });
    expect(marks.map(({ entry, blocked }) => [entry.name, blocked.blockedBy])).toEqual([["a", "capacity"]]);
    expect(parkedUntil).toBeNull();
  });
});

describe("a host that did not answer, on the queue", () => {
  /** A dispatch put back in the queue because `box` did not answer, tried again at `until`. */
  function unanswered(name: string, until: number): QueuedEntry {
    const entry = queued(name, "host");
    const iso = new Date(until).toISOString();
    return {
      ...entry,
      host: "box",
      unanswered: { until, reason: "" },
      marker: {
        ...entry.marker,
        host: "box",
        queued: { since: entry.since, notBefore: null, blockedBy: "host", until: iso },
      },
    };
  }

  it("keeps its mark until its time, and parks the run until then", () => {
    const later = NOW + 5_000;
    const { marks, parkedUntil } = holdMarksDue([unanswered("a", later)], {
      chosen: new Set(),
      held: [],
      caps: OPEN,
      nowMs: NOW,
    });
    expect(marks).toEqual([]);
    expect(parkedUntil).toBe(later);
  });

  it("once its time has come, gives it what holds it now, else leaves it for promotion to start", () => {
    expect(due([unanswered("a", NOW - 1)], { held: [running] })).toEqual([["a", "capacity"]]);
    expect(due([unanswered("a", NOW - 1)], {})).toEqual([]);
  });
});
