import { describe, expect, it } from "vitest";
import { retryDelayMs } from "../../src/dispatch/queue/requeue.js";

// How long a dispatch whose host did not answer waits before its next try (specs/placement.md, "A host
// that does not answer"): 5 s after the first failure, doubling, never more than 5 min.

describe("the wait before a silent host is tried again", () => {
  it.each([
    [1, 5_000],
    [2, 10_000],
    [3, 20_000],
    [6, 160_000],
    [7, 300_000],
    [1000, 300_000],
    [0, 5_000],
  ])("after %i tries: %i ms", (tries, ms) => {
    expect(retryDelayMs(tries)).toBe(ms);
  });
});
