import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { codexBackend as codex } from "../../src/backends/codex.js";

// codex's rate-limit windows: account/rateLimits/updated of its app-server (RateLimitSnapshot as `codex
// app-server generate-ts` of 0.171.0 prints it) and the token_count events of its rollout
// (test/fixtures/recorded/codex-rollout: the rollout lines of codex 0.171.0 against a mock answering with
// x-codex-* headers, its other lines left out). The windows become a line's `quota`; never progress.

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
          status: null,
        },
        {
          limit: "codex",
          window: "secondary",
          usedPercent: 7.5,
          windowMinutes: 10080,
          resetsAt: "2026-12-11T14:40:00.000Z",
          status: null,
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
      { limit: "", window: "primary", usedPercent: 3, windowMinutes: null, resetsAt: null, status: null },
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
      {
        limit: "x".repeat(64),
        window: "primary",
        usedPercent: null,
        windowMinutes: null,
        resetsAt: null,
        status: null,
      },
    ]);
  });
});

const rollout = (scenario: string) =>
  readFileSync(new URL(`../fixtures/recorded/codex-rollout/${scenario}.jsonl`, import.meta.url), "utf8")
    .split("\n")
    .filter((l) => l !== "");

describe("codex's windows in its rollout, as exec writes them", () => {
  const log = codex.usageLog;

  it("reads both windows of an answer's token_count, with the time codex wrote them", () => {
    const lines = rollout("window-text").map((l) => log?.parse(l));
    const windows = lines.filter((l) => l?.facts?.quota !== undefined);
    expect(windows).toHaveLength(1);
    expect(windows[0]?.at).toMatch(/^2026-12-06T/);
    expect(windows[0]?.facts?.quota).toEqual([
      {
        limit: "codex",
        window: "primary",
        usedPercent: 42.5,
        windowMinutes: 300,
        resetsAt: expect.stringMatching(/Z$/),
        status: null,
      },
      {
        limit: "codex",
        window: "secondary",
        usedPercent: 12,
        windowMinutes: 10080,
        resetsAt: expect.stringMatching(/Z$/),
        status: null,
      },
    ]);
    // The usage of the same answer is still read, and the model of its turn.
    expect(lines.some((l) => l?.facts?.usage !== undefined)).toBe(true);
    expect(lines.some((l) => l?.model === "mock-model")).toBe(true);
  });

  it("reads the windows a 429 usage_limit_reached reported: the primary used to 100 %", () => {
    const quota = rollout("usage-limit").flatMap((l) => log?.parse(l)?.facts?.quota ?? []);
    expect(quota.map((w) => [w.window, w.usedPercent])).toEqual([
      ["primary", 100],
      ["secondary", 12],
    ]);
  });

  it("a token_count without rate_limits, or with null windows, says nothing", () => {
    const count = (rateLimits: unknown) =>
      JSON.stringify({
        timestamp: "2026-12-06T19:00:00.000Z",
        type: "event_msg",
        payload: { type: "token_count", info: null, rate_limits: rateLimits },
      });
    expect(log?.parse(count(null))).toBeNull();
    expect(log?.parse(count({ limit_id: "codex", primary: null, secondary: null }))).toBeNull();
    expect(log?.parse(count({ primary: { used_percent: 1e9, resets_at: "x" } }))?.facts?.quota).toEqual([
      { limit: "", window: "primary", usedPercent: null, windowMinutes: null, resetsAt: null, status: null },
    ]);
  });
});
