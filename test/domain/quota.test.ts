import { describe, expect, it } from "vitest";
import {
  foldWindows,
  isSpent,
  MAX_WINDOWS,
  mergeWindows,
  minutesOf,
  percentOf,
  type QuotaWindow,
  quotaName,
  resetFromEpoch,
  resetFromSeconds,
  type SeenWindow,
  shareOf,
  spentUntil,
} from "../../src/domain/spend/quota.js";

// A CLI's rate-limit windows as quota.json keeps them (src/domain/spend/quota.ts): one unit, sparse
// reports merged, hostile figures dropped rather than believed.

const window = (over: Partial<QuotaWindow> = {}): QuotaWindow => ({
  limit: "codex",
  window: "primary",
  usedPercent: 10,
  windowMinutes: 300,
  resetsAt: "2026-12-06T20:00:00.000Z",
  status: null,
  ...over,
});

describe("a window's figures", () => {
  it.each([
    [42.5, 42.5],
    [0, 0],
    [100, 100],
    [-1, null],
    [100.5, null],
    [Number.NaN, null],
    ["42", null],
    [null, null],
  ])("percent %s reads %s", (value, expected) => {
    expect(percentOf(value)).toBe(expected);
  });

  it.each([
    [300, 300],
    [10080, 10080],
    [0, null],
    [1.5, null],
    [10 ** 9, null],
    [undefined, null],
  ])("minutes %s read %s", (value, expected) => {
    expect(minutesOf(value)).toBe(expected);
  });

  it.each([
    [1796563454, "2026-12-06T13:24:14.000Z"],
    // Milliseconds mistaken for seconds, and noise, are not times.
    [1796563454637, null],
    [12, null],
    [Number.POSITIVE_INFINITY, null],
    ["1796563454", null],
  ])("reset %s reads %s", (value, expected) => {
    expect(resetFromSeconds(value)).toBe(expected);
  });

  it.each([
    // A fraction up to 1 (Claude's utilization), a percent above it (a port that prints 82).
    [0.91, 91],
    [0.5, 50],
    [0, 0],
    [1, 100],
    [82, 82],
    [100, 100],
    [100.01, null],
    [-0.1, null],
    [Number.NaN, null],
    ["0.9", null],
  ])("a used share %s reads %s %", (value, expected) => {
    expect(shareOf(value)).toBe(expected);
  });

  it.each([
    // Seconds (what Claude Code and codex print) and milliseconds (what one SDK port documents), by magnitude.
    [1796563454, "2026-12-06T13:24:14.000Z"],
    [1796563454637, "2026-12-06T13:24:14.637Z"],
    // Neither: too small for either unit, between the two ranges, past the year 3000 in milliseconds.
    [12, null],
    [99_999_999_999, null],
    [10 ** 15, null],
    [Number.NaN, null],
    [null, null],
  ])("a reset in seconds or milliseconds %s reads %s", (value, expected) => {
    expect(resetFromEpoch(value)).toBe(expected);
  });

  it("cuts a name to 64 characters", () => {
    expect(quotaName("x".repeat(500))).toHaveLength(64);
    expect(quotaName("codex")).toBe("codex");
  });
});

describe("merging a report into what is kept", () => {
  const at = "2026-12-06T18:00:00.000Z";

  it("keeps a new window, stamped when it was seen", () => {
    expect(mergeWindows([], [window()], at)).toEqual([{ ...window(), seenAt: at }]);
  });

  it("a figure the report leaves null keeps the known one: reports are sparse", () => {
    const kept: SeenWindow[] = [{ ...window(), seenAt: "earlier" }];
    const merged = mergeWindows(kept, [window({ usedPercent: 55, resetsAt: null, windowMinutes: null })], at);
    expect(merged).toEqual([{ ...window({ usedPercent: 55 }), seenAt: at }]);
  });

  it("keeps windows of other limits and names apart", () => {
    const kept = mergeWindows([], [window(), window({ window: "secondary", windowMinutes: 10080 })], at);
    const merged = mergeWindows(kept ?? [], [window({ limit: "other" })], at);
    expect(merged?.map((w) => `${w.limit}/${w.window}`)).toEqual([
      "codex/primary",
      "codex/secondary",
      "other/primary",
    ]);
  });

  it("says nothing changed for a report of no window", () => {
    expect(mergeWindows([{ ...window(), seenAt: at }], [], at)).toBeNull();
  });

  it("keeps at most MAX_WINDOWS: a CLI naming ever more windows cannot grow the file", () => {
    const many = Array.from({ length: 40 }, (_, i) => window({ window: `w${i}` }));
    const merged = mergeWindows([], many, at) ?? [];
    expect(merged).toHaveLength(MAX_WINDOWS);
    // A known window is still updated once the file is full.
    const again = mergeWindows(merged, [window({ window: "w0", usedPercent: 99 })], at) ?? [];
    expect(again.find((w) => w.window === "w0")?.usedPercent).toBe(99);
    expect(mergeWindows(merged, [window({ window: "w99" })], at)).toBeNull();
  });
});

describe("a window's status", () => {
  const at = "2026-12-06T18:00:00.000Z";

  it.each([
    [window({ status: "rejected", usedPercent: 12 }), true],
    [window({ status: null, usedPercent: 100 }), true],
    [window({ status: "warning", usedPercent: 91 }), false],
    [window({ status: "allowed", usedPercent: null }), false],
    [window({ status: null, usedPercent: null }), false],
  ])("spent: %o → %s (rejected is spent whatever its figures)", (w, expected) => {
    expect(isSpent(w)).toBe(expected);
  });

  it("merging keeps the last status that was said: a report without one keeps it", () => {
    const warned = mergeWindows([], [window({ status: "warning", usedPercent: 91 })], at) ?? [];
    const bare = mergeWindows(warned, [window({ status: null, usedPercent: 95 })], at) ?? [];
    expect(bare[0]).toMatchObject({ status: "warning", usedPercent: 95 });
    const refused = mergeWindows(bare, [window({ status: "rejected", usedPercent: null })], at) ?? [];
    expect(refused[0]).toMatchObject({ status: "rejected", usedPercent: 95 });
    const back = mergeWindows(refused, [window({ status: "allowed", usedPercent: null })], at) ?? [];
    expect(back[0]?.status).toBe("allowed");
  });

  it("folds without a time as it merges with one", () => {
    const folded = foldWindows([window({ status: "warning" })], [window({ status: null, usedPercent: 80 })]);
    expect(folded).toEqual([window({ status: "warning", usedPercent: 80 })]);
    expect(foldWindows(folded, [])).toEqual(folded);
  });

  it.each([
    ["nothing spent", [window(), window({ window: "secondary" })], null],
    [
      "the latest reset of the spent ones",
      [
        window({ status: "rejected", resetsAt: "2026-12-06T20:00:00.000Z" }),
        window({ window: "secondary", usedPercent: 100, resetsAt: "2026-12-09T00:00:00.000Z" }),
        window({ window: "other", resetsAt: "2027-01-01T00:00:00.000Z" }),
      ],
      "2026-12-09T00:00:00.000Z",
    ],
    ["a spent window without a reset: unknown", [window({ status: "rejected", resetsAt: null })], null],
  ] as const)("spent until: %s", (_, windows, expected) => {
    expect(spentUntil(windows)).toBe(expected);
  });
});
