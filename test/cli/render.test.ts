import { afterEach, describe, expect, it, vi } from "vitest";
import { interleave } from "../../src/cli/logs-command.js";
import {
  type AskedQuestion,
  askingText,
  conversationLogLines,
  conversationShowLines,
  type SentMessage,
  shortWhy,
  steeringLine,
} from "../../src/cli/render.js";
import { budgetLine } from "../../src/cli/spend-text.js";
import { renderStatus } from "../../src/cli/status-command.js";
import { lockActivityText } from "../../src/dispatch/read/lock-activity.js";
import type { DispatchRow } from "../../src/dispatch/read/rows.js";
import { comeBackAt, whyLine } from "../../src/domain/ending/record-words.js";

const NOW = Date.parse("2026-11-29T10:00:00Z");

function row(overrides: Partial<DispatchRow>): DispatchRow {
  const base = baseRow(overrides);
  if (overrides.spend !== undefined || base.tokens === null)
    return { ...base, spend: overrides.spend ?? null };
  const tokens = base.tokens.input + base.tokens.output;
  return { ...base, spend: { tokens, costUsd: null, costSource: null, maxTokens: null, maxCostUsd: null } };
}

function baseRow(overrides: Partial<DispatchRow>): DispatchRow {
  return {
    run: "default",
    name: "fix-tests",
    dispatchId: "20261129T093000Z-k3x9qa",
    dir: "/h/runs/default/dispatches/fix-tests/20261129T093000Z-k3x9qa",
    backend: "codex",
    state: "running",
    admittedAt: "2026-11-29T09:56:48Z",
    startedAt: "2026-11-29T09:56:48Z",
    endedAt: null,
    status: null,
    reason: null,
    lastEvent: "$ npm test",
    lastEventAt: "2026-11-29T09:59:58Z",
    openToolCalls: [],
    tokens: { input: 20_263, cached: 0, output: 29 },
    spend: { tokens: 20_292, costUsd: null, costSource: null, maxTokens: null, maxCostUsd: null },
    unread: false,
    queue: null,
    problems: [],
    undecided: null,
    error: null,
    attempt: 1,
    earlier: [],
    next: null,
    heavy: null,
    ...overrides,
  };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("status as people read it (NO_COLOR, 80 columns)", () => {
  it("renders the golden table: live first, open tools with their age, states apart from results, unread marked, a recorded one's age from its start", () => {
    // Retry times are shown in local time: the expectations are written for UTC.
    vi.stubEnv("TZ", "UTC");
    vi.stubEnv("NO_COLOR", "1");
    const rows = [
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
        admittedAt: null,
        startedAt: "2026-11-29T08:59:30Z",
        status: "ok",
        reason: "exited",
        unread: true,
        tokens: { input: 1_500_000, cached: 0, output: 2000 },
      }),
      row({
        name: "a-very-long-dispatch-name",
        dispatchId: "20261129T080000Z-dddddd",
        state: "recorded",
        admittedAt: null,
        startedAt: "2026-11-28T10:00:00Z",
        status: "timeout",
        reason: "idle-timeout",
        error: { kind: "timeout", message: "no output for 15m (--idle 15m)", retryAfter: null },
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
    ];
    const text = renderStatus(rows, { run: "default", hidden: 3, now: NOW });
    expect(text).toBe(
      [
        "  NAME           ID     BACKEND     STATE     AGE    TOKENS DOING / RESULT",
        "  fix-tests      k3x9qa codex       running   3m12s  20k    tool open 3m12s: ca…",
        "  docs           aaaaaa claude-code running   3m12s  -      retrying 2/10",
        "  orphan-one     bbbbbb codex       orphaned  3m12s  20k",
        "* done           cccccc codex       recorded  1h00m  1.5M   ok",
        "  a-very-long-d… dddddd codex       recorded  24h00m 20k    timeout (idle-timeo…",
        "  limited        eeeeee codex       recorded  3m12s  20k    rate-limit until 14…",
        "  no-key         ffffff codex       recorded  3m12s  20k    auth: invalid x-api…",
        "(3 older recorded: catherd status --all)",
        "",
      ].join("\n"),
    );
    for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
    // A terminal 120 columns wide shows the whole of each.
    const wide = renderStatus(rows, { run: "default", hidden: 3, now: NOW, width: 120 });
    expect(wide).toContain(" tool open 3m12s: cargo build --release --all-targets\n");
    expect(wide).toContain(" timeout (idle-timeout)\n");
    expect(wide).toContain(" rate-limit until 14:05\n");
    expect(wide).toContain(" auth: invalid x-api-key\n");
  });

  it("is as narrow as its rows let it be: the last column gets the room", () => {
    const text = renderStatus([row({ name: "t1", backend: "exec", lastEvent: "compiling" })], {
      run: "default",
      hidden: 0,
      now: NOW,
    });
    expect(text.split("\n")[0]).toBe("  NAME ID     BACKEND STATE     AGE    TOKENS DOING / RESULT");
    expect(text.split("\n")[1]).toMatch(/^ {2}t1 {3}k3x9qa exec {4}running {3}3m12s {2}20k {4}compiling$/);
  });

  it("says why in one line: the kind, when to come back, the message", () => {
    vi.stubEnv("TZ", "UTC");
    expect(whyLine({ kind: "quota", message: "Credit balance is too low", retryAfter: null }, NOW)).toBe(
      "quota — Credit balance is too low",
    );
    expect(whyLine({ message: "an old record's message" }, NOW)).toBe("an old record's message");
    expect(
      whyLine({ kind: "rate-limit", message: "slow down", retryAfter: "2026-11-29T14:05:00Z" }, NOW),
    ).toBe("rate-limit, retry after 14:05 — slow down");
    expect(shortWhy({ kind: "quota", message: "x", retryAfter: "2026-12-01T08:00:00Z" }, NOW)).toBe(
      "quota until Dec 1",
    );
    expect(comeBackAt("2026-11-29T14:05:00Z", NOW)).toBe("14:05");
    expect(comeBackAt("2026-12-01T08:00:00Z", NOW)).toBe("2026-12-01 08:00");
    expect(comeBackAt("not a time", NOW)).toBe("not a time");
  });

  it("shows a chain as one row: its own attempt first, then where it goes next, then how the earlier ones ended", () => {
    const text = renderStatus(
      [
        row({
          name: "ladder",
          backend: "claude-code",
          state: "running",
          lastEvent: "thinking",
          openToolCalls: [],
          attempt: 3,
          earlier: [
            { dispatchId: "a", attempt: 1, backend: "codex", status: "limit", kind: "quota" },
            { dispatchId: "b", attempt: 2, backend: "claude-code", status: "limit", kind: "rate-limit" },
          ],
        }),
        row({
          name: "handing-on",
          dispatchId: "20261129T060000Z-gggggg",
          state: "recorded",
          status: "limit",
          reason: "provider-unavailable",
          error: { kind: "quota", message: "Quota exceeded", retryAfter: null },
          next: { backend: "gemini", model: null, notBefore: null },
        }),
      ],
      { run: "default", hidden: 0, now: NOW },
    );
    // The table cuts the column at 80 (a wider terminal shows it whole); --json and `show` carry the chain.
    expect(text.split("\n").slice(1, 3)).toEqual([
      "  ladder     k3x9qa claude-code running   3m12s  20k    thinking ← claude-code …",
      "  handing-on gggggg codex       recorded  3m12s  20k    quota: Quota exceeded →…",
    ]);
    expect(renderStatus([], { run: "x", hidden: 0, now: NOW })).toBe("no dispatches in run x\n");
    const wide = renderStatus(
      [
        row({
          name: "ladder",
          backend: "claude-code",
          lastEvent: "thinking",
          earlier: [
            { dispatchId: "a", attempt: 1, backend: "codex", status: "limit", kind: "quota" },
            { dispatchId: "b", attempt: 2, backend: "claude-code", status: "limit", kind: "rate-limit" },
          ],
          openToolCalls: [],
        }),
      ],
      { run: "default", hidden: 0, now: NOW, width: 160 },
    );
    expect(wide.split("\n")[1]).toMatch(/ thinking ← claude-code rate-limit ← codex quota$/);
  });

  it("says what a dispatch's catherd lock does, in the form of an open tool call, before the tool call itself", () => {
    const since = "2026-11-29T09:57:50Z";
    const open = [{ id: "t", label: "$ catherd lock -- npm test", openedAt: since }];
    const text = renderStatus(
      [
        row({
          name: "waits",
          heavy: { class: "heavy", state: "waiting", command: "npm test", since, ahead: 3 },
        }),
        row({
          name: "next",
          heavy: { class: "heavy", state: "waiting", command: "npm test", since, ahead: 0 },
        }),
        row({
          name: "runs",
          openToolCalls: open,
          heavy: { class: "heavy", state: "running", command: "npm test", since, ahead: null },
        }),
      ],
      { run: "default", hidden: 0, now: NOW },
    );
    expect(
      text
        .split("\n")
        .slice(1, 4)
        .map((l) => / (heavy .*)$/.exec(l)?.[1]),
    ).toEqual(["heavy slot: 3 ahead", "heavy slot: next", "heavy 2m10s: npm test"]);
    expect(lockActivityText({ class: "heavy", state: "waiting", command: "x", since, ahead: 3 }, NOW)).toBe(
      "waiting for a heavy slot (3 ahead)",
    );
    expect(
      lockActivityText({ class: "build", state: "running", command: "make", since, ahead: null }, NOW),
    ).toBe("running a build command: make, 2m10s");
  });

  it("says so when a run is empty", () => {
    expect(renderStatus([], { run: "nightly", hidden: 0, now: NOW })).toBe("no dispatches in run nightly\n");
  });
});

describe("spend in status", () => {
  it("shows tokens and cost against the caps, and the run's budget in a first line", () => {
    const capped = row({
      name: "capped",
      spend: { tokens: 41_000, costUsd: 0.1234, costSource: "priced", maxTokens: 50_000, maxCostUsd: 5 },
    });
    const text = renderStatus([capped, row({ name: "plain" })], { run: "default", hidden: 0, now: NOW });
    const [header, first, second] = text.split("\n");
    expect(header).toBe("  NAME   ID     BACKEND STATE     AGE    TOKENS  COST         DOING / RESULT");
    expect(first).toMatch(/^ {2}capped k3x9qa codex {3}running {3}3m12s {2}41k\/50k ~\$0\.12\/\$5\.00 /);
    // Usage without a dollar figure: `?`, where `-` would say there is no usage yet.
    expect(second).toMatch(/ 20k {5}\? {12}\$ npm test$/);
    const view = {
      budget: { tokens: 2_000_000, usd: 25, minutes: 600 },
      spend: { tokens: 412_000, costUsd: 3.2, unpriced: 1, live: 3, dispatches: 7 },
      elapsedMs: 65 * 60_000,
      spent: null,
      problems: [],
    };
    expect(budgetLine(view, "nightly")).toBe(
      "run nightly budget (--run-budget tokens=2M,usd=25,minutes=600): 412k of 2.0M tokens, ≥ $3.20 of $25.00, 1h05m of 10h00m (1 without a dollar figure) — 3 live\n",
    );
  });
});

describe("a steerable dispatch's conversation in words", () => {
  const question: AskedQuestion = {
    id: "q1",
    kind: "permission",
    asks: "run: npm test",
    askedAt: "2026-11-29T09:59:00.000Z",
    answerBy: "2026-11-29T10:00:00.000Z",
    answer: null,
    waiting: true,
  };
  const message: SentMessage = {
    id: "20261129T095800000Z-k3x9qa",
    state: "acted",
    head: "also update the docs",
    interrupt: false,
    sentAt: "2026-11-29T09:58:00.000Z",
    at: "2026-11-29T09:59:30.000Z",
    why: null,
    history: [
      { state: "queued", at: "2026-11-29T09:58:00.000Z", why: null },
      { state: "delivered", at: "2026-11-29T09:59:10.000Z", why: null },
      { state: "acted", at: "2026-11-29T09:59:30.000Z", why: null },
    ],
  };

  it("status: a live row waiting for an answer says what it asks, before its tool call", () => {
    const text = renderStatus(
      [
        {
          ...row({ name: "asker", state: "running" }),
          questions: 2,
          messages: { queued: 0, delivered: 0, acted: 0, failed: 0 },
          asking: { id: "q1", kind: "permission", asks: "run:\nnpm test", answerBy: question.answerBy },
        },
      ],
      { run: "default", hidden: 0, now: NOW, width: 120 },
    );
    expect(text).toMatch(/asks: q1 run: npm test \(\+1 more\)/);
    expect(text).not.toMatch(/tool open/);
    expect(askingText({ id: "q3", asks: "\u001b[31mred" })).toBe("asks: q3 red");
  });

  it("show: a line per message and per question, with its answer or its deadline", () => {
    const failed: SentMessage = {
      ...message,
      state: "failed",
      why: "the dispatch was cancelled",
      history: [],
    };
    const answered: AskedQuestion = {
      ...question,
      id: "q2",
      kind: "question",
      answer: { allow: true, text: "sqlite", why: null, by: "policy", at: "2026-11-29T10:00:00.000Z" },
    };
    expect(conversationShowLines([message, failed], [question, answered])).toEqual([
      "messages (2):",
      "  …k3x9qa acted 2026-11-29T09:59:30.000Z: also update the docs",
      "  …k3x9qa failed 2026-11-29T09:59:30.000Z (the dispatch was cancelled): also update the docs",
      "questions (2):",
      "  q1 permission: run: npm test — waiting for an answer until 2026-11-29T10:00:00.000Z",
      '  q2 question: run: npm test — answered "sqlite" by policy at 2026-11-29T10:00:00.000Z',
    ]);
  });

  it("show: a queued message of a CLI that takes messages between turns says why it waits", () => {
    const queued: SentMessage = { ...message, state: "queued", history: [] };
    expect(conversationShowLines([queued], [], "gemini takes messages between turns")).toEqual([
      "messages (1):",
      "  …k3x9qa queued 2026-11-29T09:59:30.000Z (gemini takes messages between turns): also update the docs",
    ]);
  });

  it("show: a question left unanswered by a dispatch that stopped or ended waits for nothing", () => {
    const left: AskedQuestion = { ...question, waiting: false };
    expect(conversationShowLines([], [left])).toEqual([
      "questions (1):",
      "  q1 permission: run: npm test — never answered: the dispatch ended first",
    ]);
  });

  it("logs: a line per state a message reached and per question asked and answered, in time order", () => {
    const denied: AskedQuestion = {
      ...question,
      answer: {
        allow: false,
        text: null,
        why: "not now",
        by: "catherd answer (pid 7)",
        at: "2026-11-29T09:59:20.000Z",
      },
    };
    expect(conversationLogLines([message], [denied]).map((l) => l.text)).toEqual([
      "» message …k3x9qa queued 09:58:00: also update the docs",
      "? q1 asks 09:59:00 (permission): run: npm test; answer by 10:00:00",
      "» message …k3x9qa delivered 09:59:10",
      "? q1 denied (not now) 09:59:20 by catherd answer (pid 7)",
      "» message …k3x9qa acted 09:59:30",
    ]);
    const cancelled: SentMessage = {
      ...message,
      state: "failed",
      history: [
        { state: "queued", at: "2026-11-29T09:58:00.000Z", why: null },
        { state: "failed", at: "2026-11-29T09:59:00.000Z", why: "the dispatch was cancelled" },
      ],
    };
    expect(conversationLogLines([cancelled], []).at(-1)?.text).toBe(
      "! » message …k3x9qa failed 09:59:00: the dispatch was cancelled",
    );
  });

  it("logs: conversation lines go among the event lines by the time events.times gives each", () => {
    const times = [
      { bytes: 100, atMs: 1000 },
      { bytes: 200, atMs: 3000 },
    ];
    const events: [string, number][] = [
      ["a", 50],
      ["b", 100],
      ["c", 150],
      ["d", 250],
    ];
    const talk = [
      { atMs: 500, key: "1", text: "x" },
      { atMs: 2000, key: "2", text: "y" },
      { atMs: 9000, key: "3", text: "z" },
    ];
    // d is past the last checkpoint: undated, after everything dated.
    expect(interleave(events, talk, times, 0)).toEqual([
      ["x", 0],
      ["a", 50],
      ["b", 100],
      ["y", 100],
      ["c", 150],
      ["z", 150],
      ["d", 250],
    ]);
  });

  it("wait: a record's steering counts in one line", () => {
    expect(
      steeringLine({
        messages: { queued: 0, delivered: 0, acted: 2, failed: 1 },
        questions: { asked: 1, answered: 1, byPolicy: 1, unanswered: 0 },
        keptOpenMs: 30_000,
      }),
    ).toBe("steering: 3 messages (2 acted, 1 failed), 1 question (1 answered, 1 by policy), kept open 30s");
    expect(
      steeringLine({
        messages: { queued: 0, delivered: 0, acted: 0, failed: 0 },
        questions: { asked: 0, answered: 0, byPolicy: 0, unanswered: 0 },
        keptOpenMs: null,
      }),
    ).toBe("steering: 0 messages, no questions");
  });
});
