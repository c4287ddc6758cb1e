import { describe, expect, it } from "vitest";
import type { ErrorKind } from "../../src/domain/vocab.js";
import type { LineFacts } from "../../src/domain/watch/facts.js";
import {
  decide,
  initialWatch,
  nextDeadline,
  observe,
  type WatchLimits,
  type WatchState,
} from "../../src/domain/watch/watch.js";

const LIMITS: WatchLimits = {
  idleMs: 1000,
  wallMs: 10_000,
  stallMs: 500,
  graceAfterFinalMs: 200,
  retryAttempts: 3,
  retryWindowMs: 3000,
};

const progress: LineFacts = { progress: true };
const retryOf = (kind: ErrorKind, status: number | null = null): LineFacts => ({
  progress: false,
  retry: { attempt: 1, max: 5, message: `Reconnecting... 1/5 (${kind})`, status, kind },
});
const retry = retryOf("provider-down", 500);
const overflow = (message = "prompt is too long"): LineFacts => ({
  progress: true,
  final: { isError: true, message },
  error: { message, kind: "context", status: 400, words: "provider", retryAfter: null },
});
const goesOn: LineFacts = { progress: true, continues: true };
const neutral: LineFacts = { progress: false };
const open = (id: string): LineFacts => ({ progress: true, toolsOpened: [{ id, label: `$ ${id}` }] });
const close = (id: string): LineFacts => ({ progress: true, toolsClosed: [id] });
const final: LineFacts = { progress: true, final: { isError: false, message: null } };
const turnEnded: LineFacts = { progress: true, turn: { id: "t1", running: false } };

type Event = [at: number, facts: LineFacts];

/** Replays lines at their times from a dispatch started at 0, then judges at `now`. */
function judge(
  events: Event[],
  now: number,
  signals = { exited: false, cancelRequested: false },
  limits = LIMITS,
) {
  let state: WatchState = initialWatch(0);
  for (const [at, facts] of events) state = observe(state, facts, at);
  return decide(state, signals, limits, now);
}

describe("decide: the first matching rule wins", () => {
  const cases: {
    title: string;
    events: Event[];
    now: number;
    signals?: { exited: boolean; cancelRequested: boolean };
    verdict: string;
  }[] = [
    { title: "keeps running while output flows", events: [[900, progress]], now: 1000, verdict: "continue" },
    {
      title: "exit wins over a cancel in the same poll",
      events: [],
      now: 50,
      signals: { exited: true, cancelRequested: true },
      verdict: "exited",
    },
    {
      title: "exit wins over a wall limit in the same poll",
      events: [],
      now: 20_000,
      signals: { exited: true, cancelRequested: false },
      verdict: "exited",
    },
    {
      title: "cancel wins over the wall limit",
      events: [],
      now: 20_000,
      signals: { exited: false, cancelRequested: true },
      verdict: "cancelled",
    },
    {
      title: "wall fires at exactly wallMs, even when busy",
      events: [[9999, open("a")]],
      now: 10_000,
      verdict: "wall-timeout",
    },
    {
      title: "wall does not fire a millisecond early",
      events: [[9800, progress]],
      now: 9999,
      verdict: "continue",
    },
    {
      title: "after-final fires once its grace has passed",
      events: [[100, final]],
      now: 300,
      verdict: "after-final",
    },
    { title: "after-final waits for its whole grace", events: [[100, final]], now: 299, verdict: "continue" },
    {
      title: "three retries in a row are provider-unavailable",
      events: [
        [10, retry],
        [20, retry],
        [30, retry],
      ],
      now: 31,
      verdict: "provider-unavailable",
    },
    {
      title: "progress between retries resets the count",
      events: [
        [10, retry],
        [20, retry],
        [25, progress],
        [30, retry],
      ],
      now: 31,
      verdict: "continue",
    },
    {
      title: "retrying for the window with nothing else is provider-unavailable",
      events: [
        [100, retry],
        [3000, retry],
      ],
      now: 3100,
      verdict: "provider-unavailable",
    },
    {
      title: "idle fires at exactly idleMs of quiet",
      events: [[0, progress]],
      now: 1000,
      verdict: "idle-timeout",
    },
    {
      title: "a retry line is not progress: idle still fires",
      events: [
        [0, progress],
        [900, retry],
      ],
      now: 1000,
      verdict: "idle-timeout",
    },
    {
      title: "a neutral line is not progress",
      events: [
        [0, progress],
        [900, neutral],
      ],
      now: 1000,
      verdict: "idle-timeout",
    },
    {
      title: "a closed tool call no longer keeps the agent busy",
      events: [
        [0, open("a")],
        [10, close("a")],
      ],
      now: 1010,
      verdict: "idle-timeout",
    },
    {
      title: "a turn's end closes the tool calls its CLI never closed (codex's interrupted command)",
      events: [
        [0, open("a")],
        [10, turnEnded],
      ],
      now: 1010,
      verdict: "idle-timeout",
    },
    {
      title: "a tool call of the next turn keeps the agent busy again",
      events: [
        [0, open("a")],
        [10, turnEnded],
        [20, open("b")],
      ],
      now: 1020,
      verdict: "continue",
    },
  ];
  for (const c of cases) {
    it(c.title, () => {
      const limits = c.title.includes("window") ? { ...LIMITS, idleMs: 100_000, stallMs: 50_000 } : LIMITS;
      expect(judge(c.events, c.now, c.signals, limits).verdict).toMatchObject(
        c.verdict === "continue" ? { kind: "continue" } : { kind: "stop", reason: c.verdict },
      );
    });
  }
});

describe("decide: end early what will not recover", () => {
  const cases: {
    title: string;
    events: Event[];
    now: number;
    signals?: { exited: boolean; cancelRequested: boolean };
    verdict: object;
  }[] = [
    {
      title: "the first retry whose status says auth ends the dispatch at once, with that kind",
      events: [[40, retryOf("auth", 401)]],
      now: 40,
      verdict: { kind: "stop", reason: "provider-unavailable", errorKind: "auth" },
    },
    {
      title: "the first retry that says the quota is spent ends it too",
      events: [[40, retryOf("quota", 429)]],
      now: 40,
      verdict: { kind: "stop", reason: "provider-unavailable", errorKind: "quota" },
    },
    {
      title: "a rate-limit retry may heal: the dispatch goes on",
      events: [[40, retryOf("rate-limit", 429)]],
      now: 41,
      verdict: { kind: "continue" },
    },
    {
      title: "the same context overflow again after the CLI went on ends the dispatch with context",
      events: [
        [10, overflow()],
        [20, progress],
        [30, overflow()],
      ],
      now: 30,
      verdict: { kind: "stop", reason: "provider-unavailable", errorKind: "context" },
    },
    {
      title: "an overflow printed twice in a row (the error, then the turn's failure) is one overflow",
      events: [
        [10, overflow()],
        [11, overflow()],
      ],
      now: 12,
      verdict: { kind: "continue" },
    },
    {
      title: "a different overflow is not the same one coming again",
      events: [
        [10, overflow("too long: 200001 tokens")],
        [20, progress],
        [30, overflow("too long: 200002 tokens")],
      ],
      now: 31,
      verdict: { kind: "continue" },
    },
    {
      title: "retries in a row end the dispatch with the last retry's kind",
      events: [
        [10, retryOf("rate-limit", 429)],
        [20, retryOf("rate-limit", 429)],
        [30, retryOf("rate-limit", 429)],
      ],
      now: 30,
      verdict: { kind: "stop", reason: "provider-unavailable", errorKind: "rate-limit" },
    },
    {
      title: "idle after a retry was the last sign of life carries the retry's kind",
      events: [
        [0, progress],
        [100, retryOf("rate-limit", 429)],
      ],
      now: 1000,
      verdict: { kind: "stop", reason: "idle-timeout", errorKind: "rate-limit" },
    },
    {
      title: "idle after progress that followed a retry carries no kind",
      events: [
        [0, retryOf("rate-limit", 429)],
        [100, progress],
      ],
      now: 1100,
      verdict: { kind: "stop", reason: "idle-timeout", errorKind: null },
    },
    {
      title: "an exit while a retry was the last sign of life carries the retry's kind",
      events: [[100, retryOf("provider-down")]],
      now: 150,
      signals: { exited: true, cancelRequested: false },
      verdict: { kind: "stop", reason: "exited", errorKind: "provider-down" },
    },
    {
      title: "a cancel carries no kind, even while retrying",
      events: [[100, retryOf("provider-down")]],
      now: 150,
      signals: { exited: false, cancelRequested: true },
      verdict: { kind: "stop", reason: "cancelled", errorKind: null },
    },
    {
      title: "a CLI that goes on after its final event is not stopped for lingering",
      events: [
        [0, final],
        [100, goesOn],
      ],
      now: 250,
      verdict: { kind: "continue" },
    },
  ];
  for (const c of cases) {
    it(c.title, () => {
      expect(judge(c.events, c.now, c.signals).verdict).toEqual(c.verdict);
    });
  }
});

describe("decide: quiet stretches", () => {
  it("restarts the quiet stretch when idle is reached while a tool call is open", () => {
    const first = judge([[0, open("build")]], 1000);
    expect(first.verdict).toEqual({ kind: "continue" });
    expect(first.state.quietSince).toBe(1000);
    expect(decide(first.state, { exited: false, cancelRequested: false }, LIMITS, 1999).verdict).toEqual({
      kind: "continue",
    });
  });

  it("writes the stall notice once, at stallMs of quiet, only when not busy", () => {
    const stalled = judge([[0, progress]], 500);
    expect(stalled.verdict).toEqual({ kind: "stall", quietMs: 500 });
    const again = decide(stalled.state, { exited: false, cancelRequested: false }, LIMITS, 700);
    expect(again.verdict).toEqual({ kind: "continue" });
    expect(judge([[0, open("a")]], 600).verdict).toEqual({ kind: "continue" });
    expect(judge([[0, progress]], 499).verdict).toEqual({ kind: "continue" });
  });

  it("never stops for lingering when graceAfterFinalMs is null", () => {
    const limits = { ...LIMITS, graceAfterFinalMs: null, idleMs: 100_000, stallMs: 100_000 };
    expect(judge([[0, final]], 9000, undefined, limits).verdict).toEqual({ kind: "continue" });
  });
});

describe("observe", () => {
  it("tracks open tool calls by id and ignores a duplicate open", () => {
    let state = initialWatch(0);
    state = observe(state, open("a"), 1);
    state = observe(state, open("a"), 2);
    state = observe(state, open("b"), 3);
    expect(state.openTools.map((t) => [t.id, t.openedAt])).toEqual([
      ["a", 1],
      ["b", 3],
    ]);
    state = observe(state, close("a"), 4);
    expect(state.openTools.map((t) => t.id)).toEqual(["b"]);
  });

  it("counts retries, keeps the thread, and remembers the first final event", () => {
    let state = initialWatch(0);
    state = observe(state, { progress: true, thread: "t-1" }, 1);
    state = observe(state, retry, 2);
    state = observe(state, retry, 3);
    state = observe(state, final, 4);
    state = observe(state, final, 9);
    expect(state).toMatchObject({
      thread: "t-1",
      totalRetries: 2,
      consecutiveRetries: 0,
      finalAt: 4,
      lastEventAt: 9,
    });
  });
});

describe("nextDeadline: when decide can next change its mind without news", () => {
  const cases: { title: string; events: Event[]; stalled?: boolean; expected: number }[] = [
    { title: "a fresh run: the stall notice comes first", events: [], expected: 500 },
    { title: "after progress at 300: stall at 800", events: [[300, progress]], expected: 800 },
    { title: "stall already noticed: idle at 1000", events: [], stalled: true, expected: 1000 },
    { title: "a tool open: no stall notice, idle at 1000", events: [[0, open("a")]], expected: 1000 },
    { title: "a final answer at 100: its grace ends at 300", events: [[100, final]], expected: 300 },
    { title: "retrying since 50, stall at 500 first", events: [[50, retry]], expected: 500 },
    {
      title: "retrying since 50, with a tool open: the idle limit at 1000",
      events: [
        [0, open("a")],
        [50, retry],
      ],
      expected: 1000,
    },
    {
      title: "progress at 9800: the wall at 10000 comes before idle",
      events: [[9800, progress]],
      stalled: true,
      expected: 10_000,
    },
    { title: "neutral lines do not move it", events: [[400, neutral]], expected: 500 },
    {
      title: "a final answer the CLI went on from no longer has a grace",
      events: [
        [100, final],
        [150, goesOn],
      ],
      expected: 650,
    },
    {
      title: "a refusal is due at the line that proved it",
      events: [[70, retryOf("auth", 401)]],
      expected: 70,
    },
    {
      title: "a full retry count is due at its last retry",
      events: [
        [10, retry],
        [20, retry],
        [30, retry],
      ],
      expected: 30,
    },
  ];
  for (const c of cases) {
    it(c.title, () => {
      let state: WatchState = initialWatch(0);
      for (const [at, facts] of c.events) state = observe(state, facts, at);
      if (c.stalled === true) state = { ...state, stalled: true };
      expect(nextDeadline(state, LIMITS)).toBe(c.expected);
    });
  }

  it("is due at once for a refusal: decide stops at the time of the line that proved it", () => {
    let state: WatchState = initialWatch(0);
    state = observe(state, overflow(), 10);
    state = observe(state, progress, 20);
    state = observe(state, overflow(), 30);
    expect(nextDeadline(state, LIMITS)).toBe(30);
    expect(decide(state, { exited: false, cancelRequested: false }, LIMITS, 30).verdict).toEqual({
      kind: "stop",
      reason: "provider-unavailable",
      errorKind: "context",
    });
  });

  it("is exact: decide says nothing new a millisecond before it, and acts at it", () => {
    const limits = [LIMITS, { ...LIMITS, retryWindowMs: 400 }, { ...LIMITS, graceAfterFinalMs: null }];
    const histories: Event[][] = [
      [],
      [[300, progress]],
      [[0, open("a")]],
      [[100, final]],
      [[50, retry]],
      [
        [0, open("a")],
        [50, retry],
      ],
      [
        [10, open("a")],
        [20, close("a")],
        [30, retry],
      ],
      [
        [0, progress],
        [60, retryOf("rate-limit", 429)],
      ],
      [
        [100, final],
        [150, goesOn],
      ],
      [
        [10, overflow()],
        [20, progress],
      ],
    ];
    const quiet = { exited: false, cancelRequested: false };
    for (const limit of limits) {
      for (const events of histories) {
        // Walk deadline to deadline until a stop, as the loop does when nothing happens.
        let state: WatchState = initialWatch(0);
        for (const [at, facts] of events) state = observe(state, facts, at);
        for (let steps = 0; steps < 20; steps++) {
          const at = nextDeadline(state, limit);
          const before = decide(state, quiet, limit, at - 1);
          expect(before.verdict).toEqual({ kind: "continue" });
          expect(before.state).toBe(state);
          const judged = decide(state, quiet, limit, at);
          expect(judged.verdict.kind !== "continue" || judged.state !== state).toBe(true);
          if (judged.verdict.kind === "stop") break;
          state = judged.state;
        }
      }
    }
  });
});
