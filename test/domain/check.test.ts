import { describe, expect, it } from "vitest";
import {
  type CheckOutcome,
  checkOutcome,
  checkProblem,
  checkRepairBrief,
  checkWord,
  passedOf,
  shortCommand,
} from "../../src/domain/check/check.js";

// The check's rules (specs/dispatch.md, "Checks and races"): what a run's end means, the verdict's words,
// the repair turn's brief, the one word --notify gives.

describe("checkOutcome", () => {
  const cases: [string, Parameters<typeof checkOutcome>[0], CheckOutcome][] = [
    ["exit 0 passes", { exitCode: 0, signal: null, timedOut: false }, "passed"],
    ["any other exit fails", { exitCode: 1, signal: null, timedOut: false }, "failed"],
    ["a test runner's own 2 fails", { exitCode: 2, signal: null, timedOut: false }, "failed"],
    ["the shell's 127 is a command not found", { exitCode: 127, signal: null, timedOut: false }, "not-found"],
    [
      "the shell's 126 is a command not executable",
      { exitCode: 126, signal: null, timedOut: false },
      "not-found",
    ],
    ["a signal's 128+n fails", { exitCode: 143, signal: null, timedOut: false }, "failed"],
    [
      "stopped at its limit: timed out, whatever its exit",
      { exitCode: 143, signal: null, timedOut: true },
      "timed-out",
    ],
    [
      "stopped by a cancel: cancelled, before its limit",
      { exitCode: null, signal: null, timedOut: true, cancelled: true },
      "cancelled",
    ],
    ["no exit known: interrupted", { exitCode: null, signal: null, timedOut: false }, "interrupted"],
  ];
  for (const [what, end, outcome] of cases) {
    it(what, () => expect(checkOutcome(end)).toBe(outcome));
  }
});

describe("checkProblem and passedOf", () => {
  const run = (outcome: CheckOutcome, exitCode: number | null = null) => ({
    command: "npm test",
    outcome,
    exitCode,
    timeoutMs: 30 * 60_000,
  });
  it("a pass changes nothing", () => {
    expect(checkProblem(run("passed", 0), "repair")).toBeNull();
    expect(passedOf("passed")).toBe(true);
  });
  it("a red check is the agent's to fix, with what follows", () => {
    expect(checkProblem(run("failed", 1), "repair")).toEqual({
      kind: "verify",
      message: 'the check "npm test" failed (exit code 1): a repair turn follows',
    });
    expect(checkProblem(run("failed", 1), "no-repairs")?.message).toBe(
      'the check "npm test" failed (exit code 1)',
    );
    expect(checkProblem(run("failed", 1), { unresumable: "its CLI never named its thread" })?.message).toBe(
      'the check "npm test" failed (exit code 1); no repair is possible: its CLI never named its thread',
    );
    expect(passedOf("failed")).toBe(false);
  });
  const cannot: [CheckOutcome, RegExp][] = [
    [
      "timed-out",
      /^the check "npm test" ran past its time limit \(30m\) and was stopped; the agent's work was not judged$/,
    ],
    ["not-found", /could not be run \(exit code 127: not found or not executable\)/],
    ["slot-busy", /never got a slot of the machine's lock/],
    ["interrupted", /did not run to its end: the process that ran it was lost/],
  ];
  for (const [outcome, words] of cannot) {
    it(`a check that could not judge (${outcome}) is verify-error, never the agent's failure`, () => {
      const problem = checkProblem(run(outcome, outcome === "not-found" ? 127 : null), "repair");
      expect(problem?.kind).toBe("verify-error");
      expect(problem?.message).toMatch(words);
      expect(problem?.message).not.toMatch(/repair/);
      expect(passedOf(outcome)).toBeNull();
    });
  }
  it("a cancel is a cancel", () => {
    expect(checkProblem(run("cancelled"), "repair")?.kind).toBe("cancelled");
  });
});

describe("the words", () => {
  it("quotes a long or many-line command by its first line, cut", () => {
    expect(shortCommand("npm test")).toBe("npm test");
    expect(shortCommand("set -e\nnpm test")).toBe("set -e…");
    expect(shortCommand("x".repeat(200))).toHaveLength(120);
  });
  it("briefs a repair turn with the command, its exit code and its tail", () => {
    const brief = checkRepairBrief("npm test", { exitCode: 1, tail: ["1 failing", "  expected 2 to be 3"] });
    expect(brief).toContain("`npm test` exited with code 1.");
    expect(brief).toContain("1 failing\n  expected 2 to be 3");
    expect(brief).toContain("fix the work (not the check)");
    expect(checkRepairBrief("npm test", { exitCode: 1, tail: [] })).toContain("(it printed nothing)");
  });
  it("gives --notify one word", () => {
    const runs = [
      { dispatchId: "b", outcome: "timed-out" as const, exitCode: null, durationMs: 5, tail: [] },
    ];
    expect(checkWord(undefined, "b")).toBe("");
    expect(checkWord({ command: "t", passed: true, runs }, "b")).toBe("passed");
    expect(checkWord({ command: "t", passed: false, runs }, "b")).toBe("failed");
    expect(checkWord({ command: "t", passed: null, runs }, "b")).toBe("error");
    // A turn that did not end ok ran no check of its own: the earlier attempt's run is not its word.
    expect(checkWord({ command: "t", passed: null, runs }, "c")).toBe("");
  });
});
