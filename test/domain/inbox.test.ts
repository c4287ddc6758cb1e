import { describe, expect, it } from "vitest";
import { parseOnQuestion } from "../../src/dispatch/request/steer-input.js";
import {
  advance,
  canMove,
  deliveryOrder,
  isMessageId,
  MESSAGE_STATES,
  type MessageState,
  makeMessageId,
} from "../../src/domain/steering/inbox.js";
import {
  policyResponse,
  type QuestionKind,
  type ResponseGiven,
  responseAsGiven,
  responseMismatch,
} from "../../src/domain/steering/questions.js";

// The inbox's rules (specs/steering.md, "The inbox"), as tables.

describe("a message's state", () => {
  const allowed: Record<MessageState, MessageState[]> = {
    queued: ["delivered", "failed"],
    delivered: ["acted", "failed"],
    acted: [],
    failed: [],
  };
  for (const from of MESSAGE_STATES) {
    for (const to of MESSAGE_STATES) {
      const ok = allowed[from].includes(to);
      it(`${from} → ${to}: ${ok ? "moves" : "refused"}`, () => {
        expect(canMove(from, to)).toBe(ok);
      });
    }
  }

  it("keeps every change in order, and refuses a move back (a second supervisor that saw an older state)", () => {
    const delivered = advance(null, "m", { state: "delivered", at: "t1" });
    expect(delivered?.history.map((h) => h.state)).toEqual(["queued", "delivered"]);
    const acted = advance(delivered, "m", { state: "acted", at: "t2" });
    expect(acted?.state).toBe("acted");
    expect(advance(acted, "m", { state: "delivered", at: "t3" })).toBeNull();
    expect(advance(acted, "m", { state: "failed", at: "t3" })).toBeNull();
  });

  it("passes through delivered when the CLI acted before the take was marked", () => {
    expect(advance(null, "m", { state: "acted", at: "t" })?.history.map((h) => h.state)).toEqual([
      "queued",
      "delivered",
      "acted",
    ]);
  });

  it("says why it failed", () => {
    expect(
      advance(null, "m", { state: "failed", at: "t", why: "the dispatch was cancelled" })?.history.at(-1),
    ).toEqual({
      state: "failed",
      at: "t",
      why: "the dispatch was cancelled",
    });
  });
});

describe("message ids", () => {
  const random = () => 0.5;
  it("are the time to the millisecond and a suffix", () => {
    const id = makeMessageId(new Date("2026-12-02T05:30:12.345Z"), [], random);
    expect(id).toBe("20261202T053012345Z-iiiiii");
    expect(isMessageId(id)).toBe(true);
  });

  it("sort after every id the inbox held, even when the clock stood still or went back", () => {
    const at = new Date("2026-12-02T05:30:12.345Z");
    const first = makeMessageId(at, [], random);
    const second = makeMessageId(at, [first], random);
    const third = makeMessageId(new Date("2026-12-02T05:29:00.000Z"), [first, second], random);
    expect([first, second, third]).toEqual(
      deliveryOrder([{ id: third }, { id: first }, { id: second }]).map((m) => m.id),
    );
    expect(second).toBe("20261202T053012346Z-iiiiii");
    expect(third).toBe("20261202T053012347Z-iiiiii");
  });

  it("are no dispatch ids nor anything else", () => {
    for (const bad of ["20261202T053012Z-k3x9qa", "q1", "../x", "20261202T053012345Z-K3X9QA"]) {
      expect(isMessageId(bad)).toBe(false);
    }
  });
});

describe("--on-question", () => {
  it.each([
    ["allow", { policy: "allow", waitMs: 0 }],
    ["deny", { policy: "deny", waitMs: 0 }],
    ["wait 10m", { policy: "wait", waitMs: 600_000 }],
    ["wait:90s", { policy: "wait", waitMs: 90_000 }],
  ])("%s", (text, expected) => {
    expect(parseOnQuestion(text)).toEqual(expected);
  });

  it.each(["ask", "wait", "allow 1m", "wait forever", ""])("refuses %j", (text) => {
    expect(() => parseOnQuestion(text)).toThrow(/--on-question|duration/);
  });

  it("answers what nobody answered: allow and deny as said, a wait that ran out by denying", () => {
    expect(policyResponse({ policy: "allow", waitMs: 0 }, "q1", "t")).toMatchObject({
      allow: true,
      by: "policy",
    });
    expect(policyResponse({ policy: "deny", waitMs: 0 }, "q1", "t")).toMatchObject({ allow: false });
    expect(policyResponse({ policy: "wait", waitMs: 60_000 }, "q2", "t")).toMatchObject({
      allow: false,
      why: "nobody answered within 60 s (--on-question wait)",
    });
  });
});

describe("an answer means what it says", () => {
  const cases: [QuestionKind, ResponseGiven, string | null][] = [
    ["permission", { allow: true, text: null }, null],
    ["permission", { allow: false, text: null }, null],
    ["permission", { allow: true, text: "no" }, "a permission is answered by allow or deny, not by a text"],
    ["permission", { allow: true, text: "yes" }, "a permission is answered by allow or deny, not by a text"],
    ["permission", { allow: false, text: "no" }, "a permission is answered by allow or deny, not by a text"],
    ["question", { allow: true, text: "sqlite" }, null],
    ["question", { allow: false, text: null }, null],
    [
      "question",
      { allow: true, text: null },
      "a question is answered by its text (or declined by a deny), not by an allow",
    ],
  ];
  for (const [kind, given, refused] of cases) {
    it(`a ${kind} answered ${JSON.stringify(given)}: ${refused ?? "fits"}`, () => {
      expect(responseMismatch(kind, given)).toBe(refused);
    });
  }

  it("reaches the CLI as a deny, saying why, when it does not fit its question (a file written by hand)", () => {
    const answer = {
      schema: 1 as const,
      id: "q1",
      allow: true,
      text: "no",
      why: null,
      by: "someone",
      at: "t",
    };
    expect(responseAsGiven("permission", answer)).toEqual({
      ...answer,
      allow: false,
      text: null,
      why: "denied by catherd: a permission is answered by allow or deny, not by a text",
    });
    expect(responseAsGiven("question", answer)).toBe(answer);
    const allowed = { ...answer, text: null };
    expect(responseAsGiven("permission", allowed)).toBe(allowed);
  });
});
