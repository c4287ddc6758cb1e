import { describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import type { AnswerRequest } from "../../src/dispatch/request/answer-input.js";
import { brief, briefAsGiven, composeBrief } from "../../src/dispatch/request/brief.js";
import { LOCK_HINT } from "../../src/dispatch/request/lock-hint.js";
import { OUTCOME_CONTRACT } from "../../src/dispatch/request/outcome-contract.js";
import { answerContract } from "../../src/domain/ending/answer-contract.js";
import type { LadderFile, SpecFile } from "../../src/domain/schemas.js";
import type { BackendId } from "../../src/domain/vocab.js";

// brief.md is composed once, at staging, for the CLI that runs it (specs/dispatch.md, "A request's
// concerns"); a chain's next attempt is composed from the brief as given (brief.md's first `briefBytes`
// bytes), for its own CLI.

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
      const pairs: [BackendId, BackendId][] = [
        ["codex", "gemini"],
        ["gemini", "codex"],
        ["claude-code", "opencode"],
        ["opencode", "gemini"],
      ];
      for (const [first, next] of pairs) {
        const parts = { brief: Buffer.from(given), lockHint, outcome, answer: answer ? ANSWER : null };
        const recorded = {
          spec: { cmd: "x", ...brief.toSpec(parts) } as SpecFile,
          ladder: { request: brief.toLadder(parts) } as LadderFile,
          brief: composeBrief({ ...parts, backend: backendFor(first) }),
        };
        const carried = brief.carry(recorded, { kind: "next-attempt", backend: backendFor(next) });
        const again = composeBrief({
          brief: null,
          ...carried,
          answer: parts.answer,
          backend: backendFor(next),
        });
        const fresh = composeBrief({ ...parts, backend: backendFor(next) });
        expect(again?.toString(), `${first} → ${next}`).toBe(fresh?.toString());
      }
    },
  );

  it("keeps a brief that ends with a contract's own words, byte for byte", () => {
    const given = Buffer.from(`Quote this:\n\n${OUTCOME_CONTRACT}\n\n${answerContract(ANSWER.text)}`);
    const parts = { brief: given, outcome: true };
    const recorded = {
      spec: { cmd: "x", ...brief.toSpec(parts) } as SpecFile,
      ladder: null,
      brief: composeBrief({ ...parts, answer: ANSWER, backend: backendFor("gemini") }),
    };
    expect(briefAsGiven(recorded)?.equals(given)).toBe(true);
  });
});
