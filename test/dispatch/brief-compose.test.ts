import { describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import type { AnswerRequest } from "../../src/dispatch/request/answer-input.js";
import { briefOfChain, composeBrief } from "../../src/dispatch/request/brief.js";
import { LOCK_HINT } from "../../src/dispatch/request/lock-hint.js";
import { OUTCOME_CONTRACT } from "../../src/dispatch/request/outcome-contract.js";
import type { BackendId } from "../../src/domain/vocab.js";

// brief.md is composed once, at staging, for the CLI that runs it (specs/dispatch.md, "A request's
// concerns"); a chain's next attempt is composed from the brief as given, for its own CLI.

const ANSWER: AnswerRequest = { schema: { type: "object" }, text: '{\n  "type": "object"\n}\n', repair: 1 };

const cases: { given: string; lockHint: boolean; outcome: boolean; answer: boolean }[] = [];
for (const given of ["Find the bug.", "Find the bug.\n", "Two\n\nparagraphs\n\n"])
  for (const lockHint of [false, true])
    for (const [outcome, answer] of [
      [false, false],
      [true, false],
      [false, true],
    ] as const)
      cases.push({ given, lockHint, outcome, answer });

describe("the brief, composed once", () => {
  it("is the brief as given, byte for byte, when nothing is asked", () => {
    const brief = Buffer.from("Brief.");
    expect(composeBrief({ brief, backend: backendFor("codex") })).toBe(brief);
  });

  it("appends the hint, then the outcome contract, each after a blank line", () => {
    const composed = composeBrief({
      brief: Buffer.from("Brief."),
      lockHint: true,
      outcome: true,
      backend: backendFor("codex"),
    });
    expect(composed?.toString()).toBe(`Brief.\n\n${LOCK_HINT}\n\n${OUTCOME_CONTRACT}\n`);
  });

  it.each(cases)(
    "gives a chain's next attempt what composing the brief for its CLI gives: %o",
    ({ given, lockHint, outcome, answer }) => {
      // To a CLI that appends its own answer contract (or with no schema): brief.md cannot tell the last
      // newline of a brief as given from the blank line before a contract, so a chain to a CLI with a
      // schema flag of its own may carry one newline more (specs/dispatch.md, "A request's concerns").
      const pairs: [BackendId, BackendId][] = [
        ["codex", "gemini"],
        ["claude-code", "opencode"],
        ["opencode", "gemini"],
      ];
      for (const [first, next] of pairs) {
        const parts = { brief: Buffer.from(given), outcome, answer: answer ? ANSWER : null };
        const recorded = composeBrief({ ...parts, lockHint, backend: backendFor(first) });
        const carried = briefOfChain(recorded, { outcome, answer });
        // The hint is the same for every CLI: it stays in the brief the chain carries.
        const again = composeBrief({ ...parts, brief: carried, backend: backendFor(next) });
        const fresh = composeBrief({ ...parts, lockHint, backend: backendFor(next) });
        expect(again?.toString(), `${first} → ${next}`).toBe(fresh?.toString());
      }
    },
  );
});
