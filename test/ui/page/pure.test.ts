import { describe, expect, it } from "vitest";
import { inertText } from "../../../src/domain/text/inert-text.js";
import { gateWords, utcMinute, waitingWords, windowCells } from "../../../src/ui/page/account-words.js";
import { parsePatch } from "../../../src/ui/page/diff.js";
import { count, duration } from "../../../src/ui/page/format.js";
import {
  askingWords,
  messageWords,
  responseWords,
  sandboxWords,
} from "../../../src/ui/page/steering-words.js";
import { layoutTimeline } from "../../../src/ui/page/timeline-layout.js";
import type { BarWire } from "../../../src/ui/wire.js";

const bar = (
  id: string,
  chain: string,
  attempt: number,
  from: number,
  to: number | null,
  extra: Partial<BarWire> = {},
): BarWire => ({
  dispatchId: id,
  chain,
  followUpOf: null,
  attempt,
  name: id,
  state: to === null ? "running" : "recorded",
  status: to === null ? null : "ok",
  admittedAtMs: from,
  queuedUntilMs: null,
  queued: false,
  endedAtMs: to,
  ...extra,
});

describe("the page's pure parts", () => {
  it("says an account's gate, windows and waiting work as `catherd account list` says them", () => {
    expect(gateWords({ state: "open" })).toBe("takes work");
    expect(gateWords({ state: "probe", window: "claude/five_hour" })).toBe(
      "one dispatch at a time until its reset is confirmed (claude/five_hour)",
    );
    expect(gateWords({ state: "held", until: "2026-12-07T05:00:00.000Z", window: "primary" })).toBe(
      "out of window until 2026-12-07 05:00Z (primary)",
    );
    const now = Date.parse("2026-12-07T03:00:00Z");
    const w = {
      name: "primary",
      usedPercent: 97.4,
      windowMinutes: 300,
      resetsAt: "2026-12-07T05:00:00Z",
      status: "warning",
      seenAt: "2026-12-07T02:48:00Z",
    };
    expect(windowCells(w, now)).toEqual([
      "97%",
      "5h00m",
      "2026-12-07 05:00Z (in 2h00m)",
      "warning",
      "12m00s ago",
    ]);
    expect(
      windowCells({ ...w, usedPercent: null, windowMinutes: null, resetsAt: null, status: null }, now),
    ).toEqual(["no figure", "–", "–", "–", "12m00s ago"]);
    expect(windowCells({ ...w, resetsAt: "2026-12-07T02:00:00Z" }, now)[2]).toBe(
      "2026-12-07 02:00Z (passed)",
    );
    expect(utcMinute("not a time")).toBe("–");
    expect(waitingWords({ waiting: 0, parked: [] })).toBeNull();
    const parked = { run: "r", dispatchId: "d", name: "n" };
    expect(waitingWords({ waiting: 1, parked: [parked] })).toBe("1 waiting");
    expect(waitingWords({ waiting: 3, parked: [parked] })).toBe("3 waiting (+2 more not listed)");
  });

  it("takes ANSI escapes out of text and makes other control characters visible", () => {
    expect(inertText("\u001b[31mred\u001b[0m \u001b]0;title\u0007ok\ttab\nline \u0000\u0007\u009b2J")).toBe(
      "red ok\ttab\nline \ufffd\ufffd",
    );
  });

  it("classifies a patch's lines and folds a binary patch's data", () => {
    const patch = [
      "diff --git a/a.txt b/a.txt",
      "--- a/a.txt",
      "+++ b/a.txt",
      "@@ -1 +1 @@",
      "-old",
      "+new",
      " same",
      "diff --git a/b.bin b/b.bin",
      "GIT binary patch",
      "literal 3",
      "KcmZ>Y%",
      "",
      "literal 0",
      "",
    ].join("\n");
    const { lines, files } = parsePatch(patch);
    expect(files).toBe(2);
    expect(lines.map((l) => l.kind)).toEqual([
      "file",
      "meta",
      "meta",
      "hunk",
      "del",
      "add",
      "ctx",
      "file",
      "meta",
      "binary",
      "binary",
    ]);
  });

  it("lays chains out on lanes: a chain's attempts share one, chains that do not overlap share one", () => {
    const layout = layoutTimeline(
      [
        bar("a1", "a1", 1, 0, 100),
        bar("a2", "a1", 2, 110, 200),
        bar("b", "b", 1, 50, 150),
        bar("c", "c", 1, 300, null, { queued: true, queuedUntilMs: 320 }),
      ],
      400,
    );
    const lane = (id: string) => layout.bars.find((p) => p.bar.dispatchId === id)?.lane;
    expect([lane("a1"), lane("a2"), lane("b"), lane("c")]).toEqual([0, 0, 1, 0]);
    expect(layout.lanes).toBe(2);
    expect(layout.chains.find((c) => c.length === 2)?.map((p) => p.bar.dispatchId)).toEqual(["a1", "a2"]);
    const c = layout.bars.find((p) => p.bar.dispatchId === "c");
    expect(c).toMatchObject({ open: true, endMs: 400, waitEndMs: 320 });
    expect([layout.startMs, layout.endMs]).toEqual([0, 400]);
  });

  it("joins a conversation's turns on one lane in admission order, after its first turn's chain", () => {
    const layout = layoutTimeline(
      [
        bar("t2", "a1", 1, 300, 400, { followUpOf: "a2" }),
        bar("a2", "a1", 2, 110, 200),
        bar("a1", "a1", 1, 0, 100),
      ],
      500,
    );
    expect(layout.chains.map((c) => c.map((p) => p.bar.dispatchId))).toEqual([["a1", "a2", "t2"]]);
    expect(layout.lanes).toBe(1);
  });

  it("writes durations and counts short", () => {
    expect([duration(999), duration(61_000), duration(3_725_000), duration(200 * 3_600_000)]).toEqual([
      "999ms",
      "1m01s",
      "1h02m",
      "8d08h",
    ]);
    expect([count(999), count(1500), count(25_000), count(2_500_000)]).toEqual([
      "999",
      "1.5k",
      "25k",
      "2.5M",
    ]);
  });
});

describe("a steerable dispatch's talk on the page", () => {
  it("a live row with a question nobody answered says what it asks; a recorded one does not", () => {
    const asking = {
      id: "q1",
      kind: "permission",
      asks: "run:  npm test",
      answerBy: "2026-11-29T10:00:00.000Z",
    };
    expect(askingWords({ state: "running", asking, questions: 1 })).toBe("asks: q1 run: npm test");
    expect(askingWords({ state: "running", asking, questions: 3 })).toBe("asks: q1 run: npm test (+2 more)");
    expect(askingWords({ state: "recorded", asking, questions: 1 })).toBeNull();
    expect(askingWords({ state: "running", asking: null, questions: 0 })).toBeNull();
    expect(askingWords({ state: "running" })).toBeNull();
  });

  it("a question's answer and by whom, or until when it waits; a failed message says why", () => {
    const q = {
      id: "q1",
      kind: "permission",
      asks: "run: npm test",
      askedAt: "2026-11-29T09:59:00.000Z",
      answerBy: "2026-11-29T10:00:00.000Z",
      answer: null,
      delivered: false,
      waiting: true,
    };
    expect(responseWords(q)).toBe("waiting for an answer until 2026-11-29T10:00:00.000Z");
    expect(responseWords({ ...q, waiting: false })).toBe("never answered: the dispatch ended first");
    const answer = { allow: false, text: null, why: "no", by: "policy", at: "2026-11-29T10:00:00.000Z" };
    expect(responseWords({ ...q, answer })).toBe("denied (no) by policy");
    const m = {
      id: "x",
      state: "failed",
      head: "",
      interrupt: true,
      sentAt: null,
      at: null,
      why: "the dispatch was cancelled",
      history: [],
    };
    expect(messageWords(m)).toEqual({
      state: "failed (interrupt): the dispatch was cancelled",
      text: "(not a message)",
    });
  });
});

describe("a sandboxed dispatch on the page", () => {
  it("says what the sandbox refused, and nothing when it refused nothing or there is no sandbox", () => {
    expect(sandboxWords({ fence: { mode: "files+net", denied: 2, firstDenied: "127.0.0.1:9" } })).toBe(
      "sandbox refused 2 (first 127.0.0.1:9)",
    );
    expect(sandboxWords({ fence: { mode: "files", denied: 0, firstDenied: null } })).toBeNull();
    expect(sandboxWords({ fence: null })).toBeNull();
    expect(sandboxWords({})).toBeNull();
  });
});
