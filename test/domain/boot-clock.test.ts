import { describe, expect, it } from "vitest";
import { ageOfWrite, elapsedSince, wallShiftSince } from "../../src/domain/watch/boot-clock.js";

// Time since an instant another process recorded (specs/supervisor.md, "Clocks"): from the boot's
// monotonic clock when both readings are of one boot, whatever the wall clock did; the wall clock only
// when they cannot be compared, and never a negative time.

const HOUR = 3_600_000;
const T0 = Date.parse("2026-12-01T10:00:00Z");
const boot = (ms: number, bootId: string | null = "boot-a") => ({ bootId, ms });

describe("elapsedSince", () => {
  it.each([
    ["clocks in step: the boot clock's difference", T0 + 5000, boot(105_000), { ms: 5000, clock: "boot" }],
    [
      "the wall clock two hours ahead: still 5 s",
      T0 + 2 * HOUR + 5000,
      boot(105_000),
      { ms: 5000, clock: "boot" },
    ],
    [
      "the wall clock two hours behind: still 5 s",
      T0 - 2 * HOUR + 5000,
      boot(105_000),
      { ms: 5000, clock: "boot" },
    ],
    [
      "a boot reading behind the recorded one (impossible in one boot): 0",
      T0,
      boot(99_000),
      { ms: 0, clock: "boot" },
    ],
    [
      "another boot: the wall clock, said so",
      T0 + 7000,
      boot(3000, "boot-b"),
      { ms: 7000, clock: "wall", why: "another-boot" },
    ],
    [
      "no boot id now: the wall clock",
      T0 + 7000,
      boot(107_000, null),
      { ms: 7000, clock: "wall", why: "no-boot-id" },
    ],
    [
      "another boot and a wall clock gone back: 0, never negative",
      T0 - HOUR,
      boot(3000, "boot-b"),
      { ms: 0, clock: "wall", why: "another-boot" },
    ],
  ])("%s", (_, wallMs, nowBoot, expected) => {
    expect(elapsedSince({ wallMs: T0, boot: boot(100_000) }, { wallMs, boot: nowBoot })).toEqual(expected);
  });

  it("measures on the wall clock an instant recorded without a boot reading, or without a boot id", () => {
    const now = { wallMs: T0 + 4000, boot: boot(104_000) };
    expect(elapsedSince({ wallMs: T0, boot: null }, now)).toEqual({
      ms: 4000,
      clock: "wall",
      why: "no-boot-stamp",
    });
    expect(elapsedSince({ wallMs: T0, boot: boot(100_000, null) }, now)).toEqual({
      ms: 4000,
      clock: "wall",
      why: "no-boot-id",
    });
  });
});

describe("wallShiftSince", () => {
  it.each([
    ["clocks in step", T0 + 5000, 0],
    ["the wall clock jumped two hours ahead", T0 + 2 * HOUR + 5000, 2 * HOUR],
    ["the wall clock jumped two hours back", T0 - 2 * HOUR + 5000, -2 * HOUR],
  ])("%s", (_, wallMs, shift) => {
    expect(wallShiftSince({ wallMs: T0, boot: boot(100_000) }, { wallMs, boot: boot(105_000) })).toBe(shift);
  });

  it("is unknown across boots", () => {
    expect(
      wallShiftSince({ wallMs: T0, boot: boot(100_000) }, { wallMs: T0, boot: boot(5, "boot-b") }),
    ).toBeNull();
  });
});

describe("ageOfWrite", () => {
  // The agent last wrote 10 s ago; the mtime is on the wall clock as it was at the write.
  it.each([
    ["clocks in step", T0, T0 + 10_000, 0, 10_000],
    ["written before a jump two hours ahead: 10 s, not 2 h", T0, T0 + 2 * HOUR + 10_000, 2 * HOUR, 10_000],
    [
      "written after a jump two hours ahead: it could be before, so dated now (never early, at worst from now)",
      T0 + 2 * HOUR,
      T0 + 2 * HOUR + 10_000,
      2 * HOUR,
      0,
    ],
    ["written after a jump back: 10 s", T0 - 2 * HOUR, T0 - 2 * HOUR + 10_000, -2 * HOUR, 10_000],
    [
      "written before a jump back: the smaller age, never older than the truth",
      T0,
      T0 - 2 * HOUR + 10_000,
      -2 * HOUR,
      0,
    ],
    ["an mtime in the future: 0", T0 + 60_000, T0, 0, 0],
  ])("%s", (_, mtime, wallNow, shift, age) => {
    expect(ageOfWrite(mtime, wallNow, shift)).toBe(age);
  });

  it("is infinite for a file never written", () => {
    expect(ageOfWrite(Number.NEGATIVE_INFINITY, T0, 0)).toBe(Number.POSITIVE_INFINITY);
  });
});
