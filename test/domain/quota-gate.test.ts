import { describe, expect, it } from "vitest";
import {
  type AccountWindow,
  accountGate,
  endingWindow,
  type PoolMember,
  pickAccount,
  soonestReset,
  UNKNOWN_RESET_HOLD_MS,
} from "../../src/domain/quota/gate.js";

const NOW = Date.parse("2026-12-06T20:00:00Z");
const at = (offsetMin: number) => new Date(NOW + offsetMin * 60_000).toISOString();

/** A window seen `seenMin` minutes from now (negative: ago), used `used` %, resetting at `resetMin`. */
function win(over: Partial<AccountWindow> & { resetMin?: number | null; seenMin?: number }): AccountWindow {
  const { resetMin = 60, seenMin = -5, ...rest } = over;
  return {
    limit: "codex",
    window: "primary",
    usedPercent: null,
    windowMinutes: 300,
    resetsAt: resetMin === null ? null : at(resetMin),
    seenAt: at(seenMin),
    status: null,
    ...rest,
  };
}

describe("accountGate: whether an account takes work now", () => {
  it.each<[string, AccountWindow[], number, ReturnType<typeof accountGate>["state"], number | null]>([
    ["no window known", [], 95, "open", null],
    [
      "a bare allowed window, no figures (not 0 %, not spent)",
      [win({ status: "allowed" })],
      95,
      "open",
      null,
    ],
    ["used below the headroom", [win({ usedPercent: 94.9 })], 95, "open", null],
    ["used at the headroom", [win({ usedPercent: 95 })], 95, "held", 60],
    ["a lower headroom keeps more back", [win({ usedPercent: 80 })], 80, "held", 60],
    ["rejected whatever its figures", [win({ status: "rejected", usedPercent: 10 })], 95, "held", 60],
    [
      "two spent windows: held until the later reset",
      [win({ usedPercent: 100 }), win({ window: "secondary", usedPercent: 99, resetMin: 600 })],
      95,
      "held",
      600,
    ],
    [
      "a spent window with no reset holds an hour from when it was seen",
      [win({ status: "rejected", resetMin: null, seenMin: -10 })],
      95,
      "held",
      UNKNOWN_RESET_HOLD_MS / 60_000 - 10,
    ],
    [
      "a spent window whose reset passed, nothing since: probe",
      [win({ usedPercent: 100, resetMin: -1, seenMin: -30 })],
      95,
      "probe",
      null,
    ],
    [
      "a reset passed and a report since that serves: open",
      [
        win({ usedPercent: 100, resetMin: -10, seenMin: -30 }),
        win({ window: "secondary", usedPercent: 20, seenMin: -2 }),
      ],
      95,
      "open",
      null,
    ],
    [
      "a reset passed and the only report since is spent too: probe",
      [
        win({ usedPercent: 100, resetMin: -10, seenMin: -30 }),
        win({ window: "secondary", status: "rejected", resetMin: -5, seenMin: -2 }),
      ],
      95,
      "probe",
      null,
    ],
    [
      "a reset that is not a time is ignored",
      [win({ usedPercent: 100, resetsAt: "soon" } as Partial<AccountWindow>)],
      95,
      "open",
      null,
    ],
  ])("%s", (_title, windows, headroom, state, untilMin) => {
    const gate = accountGate(windows, headroom, NOW);
    expect(gate.state).toBe(state);
    if (untilMin !== null) expect(gate.state === "held" ? gate.until : null).toBe(NOW + untilMin * 60_000);
  });
});

describe("pickAccount: the account of a pool a dispatch runs on", () => {
  const open = { state: "open" } as const;
  const member = (name: string, over: Partial<PoolMember> = {}): PoolMember => ({
    name,
    gate: open,
    live: 0,
    soonestReset: null,
    ...over,
  });

  it.each<[string, PoolMember[], string | null, number | null]>([
    ["one open account", [member("default")], "default", null],
    [
      "drains first the one whose window resets soonest, though it is used more",
      [member("a", { soonestReset: NOW + 5 * 3600_000 }), member("b", { soonestReset: NOW + 3600_000 })],
      "b",
      null,
    ],
    [
      "one with no known reset comes after those with one",
      [member("a"), member("b", { soonestReset: NOW + 1 })],
      "b",
      null,
    ],
    ["a tie goes by name", [member("b"), member("a")], "a", null],
    [
      "a held account is skipped",
      [member("a", { gate: { state: "held", until: NOW + 60_000, window: win({}) } }), member("b")],
      "b",
      null,
    ],
    [
      "a probing account takes one dispatch",
      [member("a", { gate: { state: "probe", window: win({}) } })],
      "a",
      null,
    ],
    [
      "a probing account with one live takes no more, and frees by no time",
      [member("a", { gate: { state: "probe", window: win({}) }, live: 1 })],
      null,
      null,
    ],
    [
      "all held: none, and the first to free says when",
      [
        member("a", { gate: { state: "held", until: NOW + 7_200_000, window: win({}) } }),
        member("b", { gate: { state: "held", until: NOW + 3_600_000, window: win({}) } }),
      ],
      null,
      NOW + 3_600_000,
    ],
  ])("%s", (_title, pool, account, until) => {
    const pick = pickAccount(pool);
    expect(pick.account).toBe(account);
    if (pick.account === null) expect(pick.until).toBe(until);
  });

  it("takes the soonest reset still to come among an account's windows", () => {
    const windows = [
      win({ resetMin: -5 }),
      win({ window: "b", resetMin: 90 }),
      win({ window: "c", resetMin: 30 }),
    ];
    expect(soonestReset(windows, NOW)).toBe(NOW + 30 * 60_000);
    expect(soonestReset([], NOW)).toBeNull();
  });
});

describe("endingWindow: what an ending says of its account", () => {
  const ended = { startedAt: at(-30), endedAt: at(-1) };
  it.each<[string, { kind: string | null; retryAfter: string | null }, Partial<AccountWindow> | null]>([
    [
      "a quota with its reset: rejected until then, seen at the end",
      { kind: "quota", retryAfter: at(120) },
      { status: "rejected", resetsAt: at(120), seenAt: at(-1) },
    ],
    [
      "a quota with no reset: rejected, reset unknown",
      { kind: "quota", retryAfter: null },
      { status: "rejected", resetsAt: null },
    ],
    [
      "a rate limit with a time: rejected until then",
      { kind: "rate-limit", retryAfter: at(2) },
      { status: "rejected", resetsAt: at(2) },
    ],
    ["a rate limit with no time says nothing", { kind: "rate-limit", retryAfter: null }, null],
    [
      "any other ending says it served, seen at its start",
      { kind: null, retryAfter: null },
      { status: "allowed", seenAt: at(-30) },
    ],
    [
      "a failure of another kind says it served too",
      { kind: "context", retryAfter: null },
      { status: "allowed" },
    ],
  ])("%s", (_title, ending, expected) => {
    const window = endingWindow({ ...ended, ...ending });
    if (expected === null) expect(window).toBeNull();
    else expect(window).toMatchObject({ limit: "catherd", window: "ending", ...expected });
  });

  it("says nothing of a dispatch that never started", () => {
    expect(endingWindow({ kind: null, retryAfter: null, startedAt: null, endedAt: at(0) })).toBeNull();
  });
});
