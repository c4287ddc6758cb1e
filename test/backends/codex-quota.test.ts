import { describe, expect, it } from "vitest";
import { codexBackend as codex } from "../../src/backends/codex.js";

// account/rateLimits/updated of codex's app-server (RateLimitSnapshot as `codex app-server generate-ts`
// of 0.171.0 prints it): the windows it reports become a line's `quota`; bookkeeping, never progress.

const line = (rateLimits: unknown) =>
  JSON.stringify({ method: "account/rateLimits/updated", params: { rateLimits }, emittedAtMs: 1 });

describe("codex's rate-limit windows", () => {
  it("reads primary and secondary in percent, minutes and an ISO reset", () => {
    const facts = codex.parse(
      line({
        limitId: "codex",
        primary: { usedPercent: 42, windowDurationMins: 300, resetsAt: 1796563454 },
        secondary: { usedPercent: 7.5, windowDurationMins: 10080, resetsAt: 1797000000 },
      }),
    );
    expect(facts).toEqual({
      progress: false,
      quota: [
        {
          limit: "codex",
          window: "primary",
          usedPercent: 42,
          windowMinutes: 300,
          resetsAt: "2026-12-06T13:24:14.000Z",
        },
        {
          limit: "codex",
          window: "secondary",
          usedPercent: 7.5,
          windowMinutes: 10080,
          resetsAt: "2026-12-11T14:40:00.000Z",
        },
      ],
    });
  });

  it("a window reported null is no news of it (the recorded snapshots against the mock say nothing)", () => {
    expect(codex.parse(line({ limitId: "codex", primary: null, secondary: null }))).toEqual({
      progress: false,
    });
    const sparse = codex.parse(line({ limitId: null, primary: { usedPercent: 3 }, secondary: null }));
    expect(sparse.quota).toEqual([
      { limit: "", window: "primary", usedPercent: 3, windowMinutes: null, resetsAt: null },
    ]);
  });

  it("hostile figures are dropped, not believed, and a name cannot grow without bound", () => {
    const facts = codex.parse(
      line({
        limitId: "x".repeat(10_000),
        primary: { usedPercent: 1e9, windowDurationMins: -5, resetsAt: "soon" },
        secondary: "not a window",
      }),
    );
    expect(facts.quota).toEqual([
      { limit: "x".repeat(64), window: "primary", usedPercent: null, windowMinutes: null, resetsAt: null },
    ]);
  });
});
