import { describe, expect, it } from "vitest";
import { comeBackAt, shortWhy, whyLine } from "../../src/cli/render.js";
import { renderStatus } from "../../src/cli/status-command.js";
import type { DispatchRow } from "../../src/dispatch/overview.js";

// Retry times are shown in local time: this file's expectations are written for UTC.
process.env.TZ = "UTC";

const NOW = Date.parse("2026-11-29T10:00:00Z");

function row(overrides: Partial<DispatchRow>): DispatchRow {
  return {
    run: "default",
    name: "fix-tests",
    dispatchId: "20261129T093000Z-k3x9qa",
    dir: "/h/runs/default/dispatches/fix-tests/20261129T093000Z-k3x9qa",
    backend: "codex",
    state: "running",
    admittedAt: "2026-11-29T09:56:48Z",
    endedAt: null,
    status: null,
    reason: null,
    lastEvent: "$ npm test",
    lastEventAt: "2026-11-29T09:59:58Z",
    openToolCalls: [],
    tokens: { input: 20_263, cached: 0, output: 29 },
    unread: false,
    problems: [],
    error: null,
    ...overrides,
  };
}

describe("status as people read it (NO_COLOR, 80 columns)", () => {
  it("renders the golden table: live first, open tools with their age, unread results marked", () => {
    process.env.NO_COLOR = "1";
    const text = renderStatus(
      [
        row({
          openToolCalls: [
            { id: "i1", label: "$ cargo build --release --all-targets", openedAt: "2026-11-29T09:56:48Z" },
          ],
        }),
        row({
          name: "docs",
          dispatchId: "20261129T095000Z-aaaaaa",
          backend: "claude-code",
          lastEvent: "retrying 2/10",
          tokens: null,
        }),
        row({
          name: "orphan-one",
          dispatchId: "20261129T094000Z-bbbbbb",
          state: "orphaned",
          lastEvent: null,
        }),
        row({
          name: "done",
          dispatchId: "20261129T090000Z-cccccc",
          state: "recorded",
          status: "ok",
          reason: "exited",
          unread: true,
          tokens: { input: 1_500_000, cached: 0, output: 2000 },
        }),
        row({
          name: "a-very-long-dispatch-name",
          dispatchId: "20261129T080000Z-dddddd",
          state: "recorded",
          status: "timeout",
          reason: "idle-timeout",
          error: { kind: "timeout", message: "idle-timeout: ended by SIGTERM", retryAfter: null },
        }),
        row({
          name: "limited",
          dispatchId: "20261129T070000Z-eeeeee",
          state: "recorded",
          status: "limit",
          reason: "exited",
          error: {
            kind: "rate-limit",
            message: "This request would exceed your organization's rate limit",
            retryAfter: "2026-11-29T14:05:00.000Z",
          },
        }),
        row({
          name: "no-key",
          dispatchId: "20261129T060000Z-ffffff",
          state: "recorded",
          status: "failed",
          reason: "provider-unavailable",
          error: { kind: "auth", message: "invalid x-api-key", retryAfter: null },
        }),
      ],
      "default",
      3,
      NOW,
    );
    expect(text).toBe(
      [
        "  NAME           ID     BACKEND  STATE     AGE    TOKENS DOING / RESULT",
        "  fix-tests      k3x9qa codex    running   3m12s  20k    tool open 3m12s: cargo…",
        "  docs           aaaaaa claude   running   3m12s  -      retrying 2/10",
        "  orphan-one     bbbbbb codex    orphaned  3m12s  20k",
        "* done           cccccc codex    ok        3m12s  1.5M   exited",
        "  a-very-long-d… dddddd codex    timeout   3m12s  20k    idle-timeout",
        "  limited        eeeeee codex    limit     3m12s  20k    rate-limit, retry 14:05",
        "  no-key         ffffff codex    failed    3m12s  20k    auth: invalid x-api-key",
        "(3 older recorded: catherd status --all)",
        "",
      ].join("\n"),
    );
    for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
  });

  it("says why in one line: the kind, when to come back, the message", () => {
    expect(whyLine({ kind: "quota", message: "Credit balance is too low", retryAfter: null }, NOW)).toBe(
      "quota — Credit balance is too low",
    );
    expect(whyLine({ message: "an old record's message" }, NOW)).toBe("an old record's message");
    expect(
      whyLine({ kind: "rate-limit", message: "slow down", retryAfter: "2026-11-29T14:05:00Z" }, NOW),
    ).toBe("rate-limit, retry after 14:05 — slow down");
    expect(shortWhy({ kind: "quota", message: "x", retryAfter: "2026-12-01T08:00:00Z" }, NOW)).toBe(
      "quota, retry Dec 1",
    );
    expect(comeBackAt("2026-11-29T14:05:00Z", NOW)).toBe("14:05");
    expect(comeBackAt("2026-12-01T08:00:00Z", NOW)).toBe("2026-12-01 08:00");
    expect(comeBackAt("not a time", NOW)).toBe("not a time");
  });

  it("says so when a run is empty", () => {
    expect(renderStatus([], "nightly", 0, NOW)).toBe("no dispatches in run nightly\n");
  });
});
