import { describe, expect, it } from "vitest";
import { type DispatchRow, foldChains } from "../../src/dispatch/read/rows.js";

function row(dispatchId: string, attempt: number, backend: DispatchRow["backend"]): DispatchRow {
  return {
    run: "default",
    name: "task",
    dispatchId,
    dir: `/runs/default/${dispatchId}`,
    backend,
    state: "recorded",
    admittedAt: null,
    startedAt: null,
    endedAt: null,
    status: "limit",
    reason: "exited",
    error: { kind: "rate-limit", message: "429", retryAfter: null },
    lastEvent: null,
    lastEventAt: null,
    openToolCalls: [],
    tokens: null,
    spend: null,
    unread: true,
    queue: null,
    problems: [],
    undecided: null,
    attempt,
    earlier: [],
    next: null,
    heavy: null,
  };
}

describe("foldChains", () => {
  it("folds a chain into its last attempt, oldest first, even when its ids sort against the attempts", () => {
    // Three attempts admitted in one second: the random suffixes order them 3, 1, 2.
    const first = row("20261201T031750Z-m00001", 1, "codex");
    const second = row("20261201T031750Z-z00002", 2, "claude-code");
    const third = row("20261201T031750Z-a00003", 3, "gemini");
    const from = new Map([
      [second.dispatchId, first.dispatchId],
      [third.dispatchId, second.dispatchId],
    ]);
    const rows = foldChains([third, first, second], from);
    expect(rows.map((r) => r.dispatchId)).toEqual([third.dispatchId]);
    expect(rows[0]?.earlier.map((e) => [e.attempt, e.backend])).toEqual([
      [1, "codex"],
      [2, "claude-code"],
    ]);
  });

  it("leaves rows of separate dispatches alone", () => {
    const one = row("20261201T031750Z-aaaaaa", 1, "codex");
    const other = row("20261201T031751Z-bbbbbb", 1, "exec");
    expect(foldChains([one, other], new Map()).map((r) => r.earlier)).toEqual([[], []]);
  });
});
