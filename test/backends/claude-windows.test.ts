import { describe, expect, it } from "vitest";
import { claudeCodeBackend as claude } from "../../src/backends/claude-code.js";
import { MAX_WINDOWS, type QuotaWindow } from "../../src/domain/spend/quota.js";
import { firstFacts, recording } from "./recorded.js";

// Claude Code's rate_limit_event (src/backends/claude-windows.ts): the lines Claude Code 2.1.197 printed
// under a claude.ai login against the mock model (test/fixtures/recorded/claude/window-*), and realistic
// lines of the shapes other versions and ports print, read into windows in one unit.

const line = (info: unknown) =>
  JSON.stringify({ type: "rate_limit_event", rate_limit_info: info, uuid: "u", session_id: "s" });

const fiveHour = (over: Partial<QuotaWindow>): QuotaWindow => ({
  limit: "claude",
  window: "five_hour",
  usedPercent: null,
  windowMinutes: 300,
  resetsAt: "2026-12-06T20:00:00.000Z",
  status: "allowed",
  ...over,
});
const RESET_S = Date.parse("2026-12-06T20:00:00.000Z") / 1000;

describe("Claude Code's rate_limit_event, as recorded", () => {
  it.each([
    ["window-allowed", { status: "allowed", usedPercent: null }],
    ["window-warning", { status: "warning", usedPercent: 91 }],
    ["window-rejected", { status: "rejected", usedPercent: null }],
  ] as const)("%s: the five-hour window, bookkeeping and not progress", (scenario, want) => {
    const facts = firstFacts(claude, recording("claude", scenario), (f) => f.quota !== undefined);
    expect(facts.progress).toBe(false);
    expect(facts.quota).toEqual([
      fiveHour({ ...want, resetsAt: expect.stringMatching(/^2026-12-06T20:21:\d\d\.000Z$/) }),
    ]);
  });
});

describe("Claude Code's rate_limit_event, read defensively", () => {
  it.each([
    // A bare "allowed" names no share: not 0 %.
    [
      "a bare allowed",
      { status: "allowed" },
      [fiveHour({ window: "unified", windowMinutes: null, resetsAt: null })],
    ],
    [
      "a warning with a fraction and a reset in seconds",
      { status: "allowed_warning", rateLimitType: "seven_day", utilization: 0.8, resetsAt: RESET_S },
      [fiveHour({ window: "seven_day", windowMinutes: 10080, usedPercent: 80, status: "warning" })],
    ],
    [
      "a reset in milliseconds and a share in percent (a port's units)",
      { status: "allowed_warning", rateLimitType: "five_hour", utilization: 82, resetsAt: RESET_S * 1000 },
      [fiveHour({ usedPercent: 82, status: "warning" })],
    ],
    [
      "a rejection with overage still allowed: the plan's window spent, overage its own window",
      {
        status: "rejected",
        rateLimitType: "seven_day_opus",
        resetsAt: RESET_S,
        overageStatus: "allowed",
        overageResetsAt: RESET_S + 86_400,
        isUsingOverage: true,
      },
      [
        fiveHour({ window: "seven_day_opus", windowMinutes: 10080, status: "rejected" }),
        fiveHour({
          window: "overage",
          windowMinutes: null,
          status: "allowed",
          resetsAt: "2026-12-07T20:00:00.000Z",
        }),
      ],
    ],
    [
      "newer per-window figures, with no status of their own",
      {
        status: "allowed",
        rateLimitType: "five_hour",
        resetsAt: RESET_S,
        unifiedWindows: {
          five_hour: { utilization: 0.25, resetsAt: RESET_S },
          seven_day: { utilization: 0.5, resets_at: RESET_S + 86_400 },
        },
      },
      [
        fiveHour({}),
        fiveHour({ usedPercent: 25, status: null }),
        fiveHour({
          window: "seven_day",
          windowMinutes: 10080,
          usedPercent: 50,
          status: null,
          resetsAt: "2026-12-07T20:00:00.000Z",
        }),
      ],
    ],
  ] as const)("%s", (_, info, want) => {
    expect(claude.parse(line(info))).toEqual({ progress: false, quota: want });
  });

  it("hostile figures are dropped, names cut, windows bounded; nothing without a window is a report", () => {
    const facts = claude.parse(
      line({
        status: "rejected",
        rateLimitType: "x".repeat(10_000),
        utilization: 1e9,
        resetsAt: "soon",
        unifiedWindows: Object.fromEntries(
          Array.from({ length: 500 }, (_, i) => [`w${i}`, { utilization: -1 }]),
        ),
      }),
    );
    expect(facts.quota?.[0]).toEqual({
      limit: "claude",
      window: "x".repeat(64),
      usedPercent: null,
      windowMinutes: null,
      resetsAt: null,
      status: "rejected",
    });
    expect(facts.quota?.length).toBe(MAX_WINDOWS);
    // A name that is a property of every object is a name like any other.
    for (const name of ["constructor", "__proto__", "toString"]) {
      const odd = claude.parse(line({ status: "allowed", rateLimitType: name }));
      expect(odd.quota?.[0]).toMatchObject({ window: name, windowMinutes: null, status: "allowed" });
    }
    for (const odd of [null, "allowed", { status: "maybe" }, { utilization: 0.5 }]) {
      expect(claude.parse(line(odd))).toEqual({ progress: false });
    }
  });

  it("the session-limit result that follows a rejection reads as quota", () => {
    const facts = firstFacts(claude, recording("claude", "window-rejected"), (f) => f.final !== undefined);
    expect(facts.error?.kind).toBe("quota");
  });
});
