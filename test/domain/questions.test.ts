import { describe, expect, it } from "vitest";
import { unansweredWords } from "../../src/domain/steering/question-words.js";
import { waitsForAnswers } from "../../src/domain/steering/questions.js";
import { DISPATCH_STATES, type DispatchState } from "../../src/domain/vocab.js";

// Whether an unanswered question still waits (specs/steering.md, "What readers show"): only while its
// dispatch can take an answer — never once it is stopping or its agent has exited.

describe("waitsForAnswers", () => {
  const table: Record<DispatchState, boolean> = {
    queued: true,
    starting: true,
    running: true,
    orphaned: true,
    unknown: true,
    stopping: false,
    exited: false,
    verifying: false,
    recorded: false,
    lost: false,
  };
  it.each(DISPATCH_STATES.map((s) => [s, table[s]] as const))("%s: %s", (state, waits) => {
    expect(waitsForAnswers(state)).toBe(waits);
  });

  it("words an unanswered question by whether it waits", () => {
    const answerBy = "2026-12-01T10:20:00.000Z";
    expect(unansweredWords({ waiting: true, answerBy })).toBe(`waiting for an answer until ${answerBy}`);
    expect(unansweredWords({ waiting: false, answerBy })).toBe("never answered: the dispatch ended first");
  });
});
