import { describe, expect, it } from "vitest";
import {
  blockerOf,
  type Candidate,
  type Caps,
  type Chosen,
  choosePromotions,
  type Queued,
  type Slot,
} from "../../src/domain/admission/admission-rules.js";

const none: Caps = { maxParallel: null, perBackend: {}, perHost: {}, spent: null };
const slot = (name: string, backend: Slot["backend"] = "codex", owns: string[] = []): Slot => ({
  name,
  dispatchId: `id-${name}`,
  backend,
  owns,
});
const want = (
  backend: Candidate["backend"] = "codex",
  owns: string[] = [],
  notBefore: number | null = null,
) => ({
  backend,
  owns,
  notBefore,
});
const queued = (
  name: string,
  backend: Queued["backend"] = "codex",
  owns: string[] = [],
  notBefore: number | null = null,
): Queued => ({
  ...slot(name, backend, owns),
  backend,
  notBefore,
});
const NOW = 1_000_000;

describe("blockerOf: whether a dispatch may start beside the live ones", () => {
  const cases: [string, Candidate, Slot[], Caps, ReturnType<typeof blockerOf>][] = [
    ["an empty run without caps", want(), [], none, null],
    ["a run below its cap", want(), [slot("a"), slot("b")], { ...none, maxParallel: 3 }, null],
    [
      "a run at its cap",
      want(),
      [slot("a"), slot("b"), slot("c")],
      { ...none, maxParallel: 3 },
      { blockedBy: "capacity", blocker: { cap: 3 } },
    ],
    [
      "its backend at its cap, the run not",
      want("codex"),
      [slot("a", "codex"), slot("b", "gemini")],
      { maxParallel: 5, perBackend: { codex: 1 }, perHost: {}, spent: null },
      { blockedBy: "backend-cap", blocker: { backend: "codex", cap: 1 } },
    ],
    [
      "another backend at its cap",
      want("gemini"),
      [slot("a", "codex")],
      { maxParallel: 5, perBackend: { codex: 1 }, perHost: {}, spent: null },
      null,
    ],
    [
      "its host silent until later, before an overlap or a cap",
      { ...want("codex"), host: "box", unanswered: { until: NOW + 5000, reason: "box does not answer" } },
      [slot("a", "codex")],
      { ...none, maxParallel: 1 },
      {
        blockedBy: "host",
        blocker: { host: "box", reason: "box does not answer", until: new Date(NOW + 5000).toISOString() },
      },
    ],
    [
      "its host silent until a time now past",
      { ...want("codex"), host: "box", unanswered: { until: NOW, reason: "" } },
      [],
      none,
      null,
    ],
    [
      "its host at its cap, the run and its backend not",
      { ...want("codex"), host: "box" },
      [{ ...slot("a", "codex"), host: "box" }, slot("b", "codex")],
      { ...none, maxParallel: 5, perHost: { box: 1 } },
      { blockedBy: "host-cap", blocker: { host: "box", cap: 1 } },
    ],
    [
      "another host at its cap",
      { ...want("codex"), host: "other" },
      [{ ...slot("a", "codex"), host: "box" }],
      { ...none, perHost: { box: 1 } },
      null,
    ],
    [
      "a local dispatch beside a host at its cap",
      want("codex"),
      [{ ...slot("a", "codex"), host: "box" }],
      { ...none, perHost: { box: 1 } },
      null,
    ],
    [
      "its backend's cap named before its host's",
      { ...want("codex"), host: "box" },
      [{ ...slot("a", "codex"), host: "box" }],
      { ...none, perBackend: { codex: 1 }, perHost: { box: 1 } },
      { blockedBy: "backend-cap", blocker: { backend: "codex", cap: 1 } },
    ],
    [
      "a live dispatch owning a folder over its file",
      want("codex", ["/w/src/a.ts"]),
      [slot("a", "codex", ["/w/src/"])],
      none,
      { blockedBy: "overlap", blocker: { name: "a", dispatchId: "id-a", owns: "/w/src/a.ts" } },
    ],
    [
      "a live dispatch owning a folder named without its slash, the newcomer with it",
      want("codex", ["/w/src/"]),
      [slot("a", "codex", ["/w/src"])],
      none,
      { blockedBy: "overlap", blocker: { name: "a", dispatchId: "id-a", owns: "/w/src/" } },
    ],
    ["paths nobody holds", want("codex", ["/w/docs/"]), [slot("a", "codex", ["/w/src/"])], none, null],
    [
      "a time not yet come, before anything else",
      want("codex", ["/w/src/"], NOW + 1),
      [slot("a", "codex", ["/w/src/"])],
      { ...none, maxParallel: 1 },
      { blockedBy: "not-before", blocker: null },
    ],
    ["a time come to the millisecond", want("codex", [], NOW), [], none, null],
    [
      "an overlap before a full run",
      want("codex", ["/w/x"]),
      [slot("a", "codex", ["/w/x"])],
      { ...none, maxParallel: 1 },
      { blockedBy: "overlap", blocker: { name: "a", dispatchId: "id-a", owns: "/w/x" } },
    ],
  ];
  for (const [title, candidate, live, caps, expected] of cases) {
    it(`answers ${expected === null ? "start" : expected.blockedBy} for ${title}`, () => {
      expect(blockerOf(candidate, live, caps, NOW)).toEqual(expected);
    });
  }
});

describe("choosePromotions: which queued dispatches start when slots free", () => {
  const names = (chosen: Chosen<Queued>[]) => chosen.map((c) => c.entry.name);

  it("starts the oldest first, as many as the run's cap leaves free", () => {
    const queue = ["q1", "q2", "q3", "q4"].map((n) => queued(n));
    expect(names(choosePromotions(queue, [slot("a")], { ...none, maxParallel: 3 }, NOW))).toEqual([
      "q1",
      "q2",
    ]);
  });

  it("lets one blocked by an overlap not hold back a later one that is free", () => {
    const queue = [queued("q1", "codex", ["/w/src/"]), queued("q2", "codex", ["/w/docs/"])];
    const live = [slot("a", "codex", ["/w/src/x.ts"])];
    expect(names(choosePromotions(queue, live, { ...none, maxParallel: 3 }, NOW))).toEqual(["q2"]);
  });

  it("judges each against those chosen before it: two overlapping queued ones do not start together", () => {
    const queue = [queued("q1", "codex", ["/w/src/"]), queued("q2", "codex", ["/w/src/a.ts"])];
    expect(names(choosePromotions(queue, [], none, NOW))).toEqual(["q1"]);
  });

  it("honours the per-backend cap and lets another backend through", () => {
    const queue = [queued("q1", "codex"), queued("q2", "codex"), queued("q3", "gemini")];
    const caps: Caps = { maxParallel: 10, perBackend: { codex: 2 }, perHost: {}, spent: null };
    expect(names(choosePromotions(queue, [slot("a", "codex")], caps, NOW))).toEqual(["q1", "q3"]);
  });

  it("honours a host's cap and lets a dispatch on another host, or local, through", () => {
    const onHost = (name: string, host: string | null) => ({ ...queued(name, "codex"), host });
    const queue = [onHost("q1", "box"), onHost("q2", "box"), onHost("q3", "other"), onHost("q4", null)];
    const caps: Caps = { ...none, maxParallel: 10, perHost: { box: 2 } };
    const live = [{ ...slot("a", "codex"), host: "box" }];
    expect(names(choosePromotions(queue, live, caps, NOW))).toEqual(["q1", "q3", "q4"]);
  });

  it("skips one whose time has not come and starts it once it has", () => {
    const queue = [queued("q1", "codex", [], NOW + 5000), queued("q2")];
    expect(names(choosePromotions(queue, [], { ...none, maxParallel: 1 }, NOW))).toEqual(["q2"]);
    expect(names(choosePromotions(queue, [], { ...none, maxParallel: 1 }, NOW + 5000))).toEqual(["q1"]);
  });

  it("starts nothing in a full run, and stops walking the queue there", () => {
    let looked = 0;
    const queue = (function* () {
      for (let i = 0; i < 100; i++) {
        looked += 1;
        yield queued(`q${i}`);
      }
    })();
    expect(choosePromotions(queue, [slot("a")], { ...none, maxParallel: 1 }, NOW)).toEqual([]);
    expect(looked).toBe(1);
  });
});

describe("accounts out of window hold a dispatch (specs/quota.md)", () => {
  const resetAt = NOW + 3_600_000;
  const spent = [
    {
      limit: "codex",
      window: "primary",
      usedPercent: 97,
      windowMinutes: 300,
      resetsAt: new Date(resetAt).toISOString(),
      seenAt: new Date(NOW - 60_000).toISOString(),
      status: null,
    },
  ];
  const windows = new Map([["codex/default", spent]]);
  const caps: Caps = { ...none, windows };
  const asking = (pool: string[], headroomPercent = 95): Candidate => ({
    ...want(),
    accounts: { pool, headroomPercent },
  });

  it("holds one pinned to a spent account until its reset, whatever the run's caps", () => {
    expect(blockerOf(asking(["default"]), [], caps, NOW)).toEqual({
      blockedBy: "window",
      blocker: {
        backend: "codex",
        accounts: "default",
        window: "codex/primary",
        usedPercent: 97,
        until: new Date(resetAt).toISOString(),
      },
    });
  });

  it("lets it start once the headroom it keeps is above the window's use", () => {
    expect(blockerOf(asking(["default"], 98), [], caps, NOW)).toBeNull();
  });

  it("starts one of a pool on the account with headroom", () => {
    const queue = [{ ...queued("q1"), accounts: { pool: ["default", "work"], headroomPercent: 95 } }];
    expect(choosePromotions(queue, [], caps, NOW).map((c) => c.account)).toEqual(["work"]);
  });

  it("starts one dispatch on an account whose reset passed unconfirmed, and holds the next", () => {
    const later = NOW + 2 * 3_600_000;
    const queue = ["q1", "q2"].map((n) => ({
      ...queued(n),
      accounts: { pool: ["default"], headroomPercent: 95 },
    }));
    expect(choosePromotions(queue, [], caps, later).map((c) => [c.entry.name, c.account])).toEqual([
      ["q1", "default"],
    ]);
    const probing = [{ ...slot("q1"), account: "default" }];
    expect(blockerOf(queue[1] as Candidate, probing, caps, later)?.blocker?.until).toBeNull();
  });

  it("holds nothing that asks for no account (exec)", () => {
    expect(blockerOf(want(), [], caps, NOW)).toBeNull();
  });
});
