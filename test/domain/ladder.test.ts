import { describe, expect, it } from "vitest";
import {
  type Ended,
  MAX_RETRIES_PER_RUNG,
  type NextStep,
  nextStep,
  type Rung,
} from "../../src/domain/admission/ladder.js";

// The failover ladder's rule (specs/dispatch.md, "The failover ladder"), as a table.

const codex: Rung = { backend: "codex", model: null, bin: "/bin/codex" };
const claude: Rung = { backend: "claude-code", model: "sonnet", bin: "/bin/claude" };
const gemini: Rung = { backend: "gemini", model: null, bin: "/bin/gemini" };
const END = "2026-11-30T10:00:00Z";

function ended(overrides: Partial<Ended>): Ended {
  return {
    rung: codex,
    ladder: { rungs: [claude, gemini], retryWithinMs: 600_000, retries: 0, repairs: 0 },
    status: "limit",
    kind: "quota",
    retryAfter: null,
    endedAt: END,
    thread: "t-1",
    ...overrides,
  };
}

describe("nextStep", () => {
  const cases: [string, Partial<Ended>, Partial<NextStep> | null][] = [
    ["ok ends the chain", { status: "ok", kind: null }, null],
    ["no ladder: a plain dispatch", { ladder: null }, null],
    ["quota climbs", {}, { backend: "claude-code", model: "sonnet", why: "failover", notBefore: null }],
    ["provider-down climbs", { kind: "provider-down" }, { backend: "claude-code", why: "failover" }],
    ["auth climbs (status failed)", { status: "failed", kind: "auth" }, { backend: "claude-code" }],
    ["model climbs", { status: "failed", kind: "model" }, { backend: "claude-code" }],
    ["context does not", { status: "failed", kind: "context" }, null],
    ["request does not", { status: "failed", kind: "request" }, null],
    ["cli does not", { status: "failed", kind: "cli" }, null],
    ["timeout does not", { status: "timeout", kind: "timeout" }, null],
    ["cancelled does not", { status: "cancelled", kind: "cancelled" }, null],
    ["lost does not", { status: "lost", kind: "lost" }, null],
    // A cap on spending is the dispatch's own: another provider does not fix it (status limit, as a quota).
    ["budget does not, though its status is limit", { status: "limit", kind: "budget" }, null],
    ["no kind does not", { status: "failed", kind: null }, null],
    [
      "a quota with a pool of two moves to the other account, on the same rung, at once",
      { pool: 2 },
      { backend: "codex", why: "account", notBefore: null },
    ],
    [
      "a rate limit with a time, with a pool, moves account rather than wait for it",
      { pool: 2, kind: "rate-limit", retryAfter: "2026-11-30T10:05:00Z" },
      { backend: "codex", why: "account", notBefore: null },
    ],
    [
      "a rate limit with no time does not move account (no window holds the first): the ladder goes on",
      { pool: 2, kind: "rate-limit", retryAfter: null },
      { backend: "claude-code", why: "failover" },
    ],
    [
      "once every other account of the pool was tried, the ladder goes on",
      { pool: 2, ladder: { rungs: [claude], retryWithinMs: null, retries: 0, repairs: 0, accountMoves: 1 } },
      { backend: "claude-code", why: "failover" },
    ],
    ["an outage is not a window: no account move", { pool: 3, kind: "provider-down" }, { why: "failover" }],
    [
      "a rate limit naming a time within the horizon retries the same rung then",
      { kind: "rate-limit", retryAfter: "2026-11-30T10:05:00Z" },
      { backend: "codex", why: "retry", notBefore: "2026-11-30T10:05:00Z" },
    ],
    [
      "a rate limit at the horizon's edge still retries",
      { kind: "rate-limit", retryAfter: "2026-11-30T10:10:00Z" },
      { backend: "codex", why: "retry" },
    ],
    [
      "a rate limit past the horizon climbs",
      { kind: "rate-limit", retryAfter: "2026-11-30T10:10:01Z" },
      { backend: "claude-code", why: "failover" },
    ],
    [
      "a rate limit already past retries at once",
      { kind: "rate-limit", retryAfter: "2026-11-30T09:59:00Z" },
      { backend: "codex", why: "retry", notBefore: null },
    ],
    [
      "without --retry-within a rate limit climbs",
      {
        kind: "rate-limit",
        retryAfter: "2026-11-30T10:01:00Z",
        ladder: { rungs: [claude], retryWithinMs: null, retries: 0, repairs: 0 },
      },
      { backend: "claude-code", why: "failover" },
    ],
    [
      "a rung retried its most times climbs",
      {
        kind: "rate-limit",
        retryAfter: "2026-11-30T10:01:00Z",
        ladder: { rungs: [claude], retryWithinMs: 600_000, retries: MAX_RETRIES_PER_RUNG, repairs: 0 },
      },
      { backend: "claude-code", why: "failover" },
    ],
    [
      "a quota without a rung left ends",
      { ladder: { rungs: [], retryWithinMs: null, retries: 0, repairs: 0 } },
      null,
    ],
    [
      "a quota naming a time does not wait for it: it climbs",
      { kind: "quota", retryAfter: "2026-11-30T10:01:00Z" },
      { backend: "claude-code", why: "failover" },
    ],
  ];
  for (const [what, given, expected] of cases) {
    it(what, () => {
      const step = nextStep(ended(given));
      if (expected === null) expect(step).toBeNull();
      else expect(step).toMatchObject(expected);
    });
  }

  // The worker's declared outcome (--outcome): blocked or refused would be told the same on the next rung.
  const declared: [string, Partial<Ended>, Partial<NextStep> | null][] = [
    ["a quota after complete climbs", { outcome: "complete" }, { backend: "claude-code", why: "failover" }],
    ["a quota after partial climbs", { outcome: "partial" }, { backend: "claude-code", why: "failover" }],
    ["a quota with no outcome line climbs", { outcome: null }, { backend: "claude-code" }],
    ["a quota after blocked ends the chain", { outcome: "blocked" }, null],
    ["a quota after refused ends the chain", { outcome: "refused" }, null],
    ["an auth failure after blocked ends it", { status: "failed", kind: "auth", outcome: "blocked" }, null],
    [
      "a rate limit within the horizon after refused is not retried either",
      { kind: "rate-limit", retryAfter: "2026-11-30T10:05:00Z", outcome: "refused" },
      null,
    ],
    ["ok after blocked stays ok's: no next", { status: "ok", kind: null, outcome: "blocked" }, null],
  ];
  for (const [what, given, expected] of declared) {
    it(what, () => {
      const step = nextStep(ended(given));
      if (expected === null) expect(step).toBeNull();
      else expect(step).toMatchObject(expected);
    });
  }

  it("carries the ladder on: the rest of the rungs after a climb, one more retry after a retry", () => {
    expect(nextStep(ended({}))?.ladder).toEqual({
      rungs: [gemini],
      retryWithinMs: 600_000,
      retries: 0,
      repairs: 0,
    });
    expect(nextStep(ended({ kind: "rate-limit", retryAfter: "2026-11-30T10:01:00Z" }))?.ladder).toEqual({
      rungs: [claude, gemini],
      retryWithinMs: 600_000,
      retries: 1,
      repairs: 0,
    });
  });
});

// A repair turn (specs/dispatch.md, "An answer that fits a schema"): an answer that does not fit its
// schema is asked again on the same rung and thread while repairs are left.
describe("nextStep for an answer that does not fit", () => {
  const invalid = (repairs: number, more: Partial<Ended> = {}): Ended =>
    ended({
      status: "failed",
      kind: "answer-invalid",
      ladder: { rungs: [claude], retryWithinMs: null, retries: 0, repairs },
      ...more,
    });
  const cases: [string, Ended, Partial<NextStep> | null][] = [
    [
      "repairs left and a thread: a repair on the same rung, at once",
      invalid(1),
      { backend: "codex", model: null, bin: "/bin/codex", why: "repair", notBefore: null },
    ],
    ["no repair left: the chain ends (another rung would be asked the same)", invalid(0), null],
    ["no thread recorded: no repair is possible", invalid(2, { thread: null }), null],
    ["no ladder: a plain dispatch ends", invalid(1, { ladder: null }), null],
    ["a valid answer (ok) ends the chain", invalid(1, { status: "ok", kind: null }), null],
    [
      "an attempt that failed otherwise falls over as ever, its repairs kept",
      invalid(1, { status: "limit", kind: "quota" }),
      { backend: "claude-code", why: "failover" },
    ],
  ];
  for (const [what, given, expected] of cases) {
    it(what, () => {
      const step = nextStep(given);
      if (expected === null) expect(step).toBeNull();
      else expect(step).toMatchObject(expected);
    });
  }

  it("counts a repair off the repairs left, and keeps the rungs for later", () => {
    expect(nextStep(invalid(2))?.ladder).toEqual({
      rungs: [claude],
      retryWithinMs: null,
      retries: 0,
      repairs: 1,
    });
    expect(nextStep(invalid(1, { status: "limit", kind: "quota" }))?.ladder.repairs).toBe(1);
  });
});

// A repair turn for a red check (specs/dispatch.md, "Checks and races"): the check's failure goes back on the
// same rung and thread while the check's own repairs are left; an answer's repairs are counted apart.
describe("nextStep for a check still red", () => {
  const red = (checkRepairs: number, more: Partial<Ended> = {}): Ended =>
    ended({
      status: "failed",
      kind: "verify",
      ladder: { rungs: [claude], retryWithinMs: null, retries: 0, repairs: 1, checkRepairs },
      ...more,
    });
  const cases: [string, Ended, Partial<NextStep> | null][] = [
    [
      "check repairs left and a thread: a repair on the same rung, at once",
      red(2),
      { backend: "codex", model: null, bin: "/bin/codex", why: "repair", notBefore: null },
    ],
    ["no check repair left: the chain ends, whatever answer repairs are left", red(0), null],
    ["no thread recorded: no repair is possible", red(2, { thread: null }), null],
    ["a check that could not judge the turn gets no repair", red(2, { kind: "verify-error" }), null],
    ["a passing check (ok) ends the chain", red(2, { status: "ok", kind: null }), null],
  ];
  for (const [what, given, expected] of cases) {
    it(what, () => {
      const step = nextStep(given);
      if (expected === null) expect(step).toBeNull();
      else expect(step).toMatchObject(expected);
    });
  }

  it("counts a check's repair off its own repairs, leaving the answer's, and carries both over a failover", () => {
    expect(nextStep(red(2))?.ladder).toEqual({
      rungs: [claude],
      retryWithinMs: null,
      retries: 0,
      repairs: 1,
      checkRepairs: 1,
    });
    expect(nextStep(red(2, { status: "limit", kind: "quota" }))?.ladder).toMatchObject({
      rungs: [],
      repairs: 1,
      checkRepairs: 2,
    });
  });
});
