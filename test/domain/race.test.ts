import { describe, expect, it } from "vitest";
import {
  decideRace,
  parseAlso,
  patchLineCounts,
  type RaceAttempt,
  type RaceDecision,
  type RacePick,
  raceNameProblem,
} from "../../src/domain/race/race-rules.js";

// One attempt: `p` passed, `f` ended without passing, `r` still running; its end minute and its cost.
function at(attempt: number, state: "p" | "f" | "r", minute = 0, costUsd: number | null = 1): RaceAttempt {
  const ended = state !== "r";
  return {
    attempt,
    dispatchId: `20261206T2200${String(attempt).padStart(2, "0")}Z-aaaaaa`,
    ended,
    passed: state === "p",
    costUsd,
    endedAt: ended ? `2026-12-06T22:${String(minute).padStart(2, "0")}:00.000Z` : null,
  };
}

const undecided: RaceDecision = { decided: false, winner: null, cancel: [] };

const table: [string, RacePick, RaceAttempt[], RaceDecision][] = [
  ["first-pass waits while none has passed", "first-pass", [at(1, "f", 1), at(2, "r")], undecided],
  [
    "first-pass: the first to pass wins and the running ones are cancelled",
    "first-pass",
    [at(1, "r"), at(2, "p", 3), at(3, "r")],
    { decided: true, winner: 2, cancel: [1, 3] },
  ],
  [
    "first-pass: of two that passed, the earlier end wins",
    "first-pass",
    [at(1, "p", 5), at(2, "p", 3)],
    { decided: true, winner: 2, cancel: [] },
  ],
  [
    "first-pass: two that passed in one instant are parted by dispatch id",
    "first-pass",
    [at(2, "p", 3), at(1, "p", 3)],
    { decided: true, winner: 1, cancel: [] },
  ],
  [
    "first-pass: all ended, none passed: decided without a winner",
    "first-pass",
    [at(1, "f", 1), at(2, "f", 2)],
    { decided: true, winner: null, cancel: [] },
  ],
  [
    "cheapest-pass waits for every attempt even once one passed",
    "cheapest-pass",
    [at(1, "p", 1, 0.5), at(2, "r")],
    undecided,
  ],
  [
    "cheapest-pass: the passing one with the lowest cost wins",
    "cheapest-pass",
    [at(1, "p", 1, 0.9), at(2, "p", 4, 0.2), at(3, "f", 2, 0.01)],
    { decided: true, winner: 2, cancel: [] },
  ],
  [
    "cheapest-pass: an unknown cost comes after every known one",
    "cheapest-pass",
    [at(1, "p", 1, null), at(2, "p", 4, 3)],
    { decided: true, winner: 2, cancel: [] },
  ],
  [
    "cheapest-pass: equal costs go to the first to pass",
    "cheapest-pass",
    [at(1, "p", 6, 0.4), at(2, "p", 2, 0.4)],
    { decided: true, winner: 2, cancel: [] },
  ],
  [
    "cheapest-pass: none passed, no winner",
    "cheapest-pass",
    [at(1, "f", 6), at(2, "f", 2)],
    { decided: true, winner: null, cancel: [] },
  ],
  ["all waits for every attempt", "all", [at(1, "p", 1), at(2, "r")], undecided],
  [
    "all decides nothing: no winner, nothing cancelled",
    "all",
    [at(1, "p", 1), at(2, "f", 2)],
    { decided: true, winner: null, cancel: [] },
  ],
];

describe("the race's decision", () => {
  it.each(table)("%s", (_title, pick, attempts, expected) => {
    expect(decideRace(pick, attempts)).toEqual(expected);
  });
});

describe("a race's name", () => {
  it.each([
    ["fix", 8, null],
    ["a".repeat(62), 8, null],
    ["a".repeat(63), 8, "a race of 8 attempts takes a name of at most 62"],
    ["bad name", 2, "is not a name"],
    ["..", 2, "is not a name"],
  ] as const)("%s with %i attempts", (name, attempts, problem) => {
    const said = raceNameProblem(name, attempts);
    if (problem === null) expect(said).toBeNull();
    else expect(said).toContain(problem);
  });
});

describe("--also", () => {
  it.each([
    ["gemini", { backend: "gemini", model: null }],
    ["claude-code:claude-sonnet-4-5", { backend: "claude-code", model: "claude-sonnet-4-5" }],
    ["opencode:openai/gpt-5:high", { backend: "opencode", model: "openai/gpt-5:high" }],
    ["codex:", { backend: "codex", model: "" }],
  ])("%s", (text, expected) => {
    expect(parseAlso(text)).toEqual(expected);
  });
});

describe("a patch's lines", () => {
  it("counts the lines a patch adds and removes, not its headers", () => {
    const patch = [
      "diff --git a/x.txt b/x.txt",
      "index 1..2 100644",
      "--- a/x.txt",
      "+++ b/x.txt",
      "@@ -1,2 +1,3 @@",
      " keep",
      "-old",
      "+new",
      "+more",
      "diff --git a/y b/y",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/y",
      "@@ -0,0 +1 @@",
      "+y",
      "",
    ].join("\n");
    expect(patchLineCounts(patch)).toEqual({ added: 3, removed: 1 });
  });
});
