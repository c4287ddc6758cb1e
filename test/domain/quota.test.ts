import { describe, expect, it } from "vitest";
import {
  MAX_WINDOWS,
  mergeWindows,
  minutesOf,
  percentOf,
  type QuotaWindow,
  quotaName,
  resetFromSeconds,
  type SeenWindow,
} from "../../src/domain/spend/quota.js";

// A CLI's rate-limit windows as quota.json keeps them (src/domain/spend/quota.ts): one unit, sparse
// reports merged, hostile figures dropped rather than believed.

const window = (over: Partial<QuotaWindow> = {}): QuotaWindow => ({
  limit: "codex",
  window: "primary",
  usedPercent: 10,
  windowMinutes: 300,
  resetsAt: "2026-12-06T20:00:00.000Z",
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
