import { describe, expect, it } from "vitest";
import {
  ANSWER_CONTRACT_HEAD,
  answerContract,
  answerInvalidMessage,
  readAnswer,
  repairBrief,
} from "../../src/domain/answer.js";

// How catherd reads a final answer (specs/record.md, "The answer"), from each CLI's final shape.

describe("readAnswer", () => {
  const cases: [string, unknown, string | null, { value: unknown } | RegExp][] = [
    // Claude Code with --json-schema: the result's structured_output, whatever the text says.
    ["Claude's structured_output wins over the text", { a: 1 }, "Here you go.", { value: { a: 1 } }],
    ["a structured null is an answer", null, "", { value: null }],
    // codex with --output-schema: the last agent_message is the JSON text.
    ["codex's final message as JSON", undefined, '{"a": 1}', { value: { a: 1 } }],
    ["white space around it", undefined, '\n  {"a": 1}\n\n', { value: { a: 1 } }],
    ["any JSON value: an array", undefined, "[1, 2]", { value: [1, 2] }],
    ["any JSON value: a string", undefined, '"done"', { value: "done" }],
    // gemini and opencode under the contract: models fence JSON however they are told.
    ["one ```json fence around the whole message", undefined, '```json\n{"a": 1}\n```', { value: { a: 1 } }],
    ["a bare ``` fence", undefined, "```\n[true]\n```", { value: [true] }],
    ["a fence with white space outside", undefined, '\n```JSON\n{"a": 1}\n```\n', { value: { a: 1 } }],
    ["prose before the JSON is not an answer", undefined, 'Sure! {"a": 1}', /^the final message is not JSON/],
    ["a fence inside prose is not an answer", undefined, 'Here:\n```json\n{"a": 1}\n```', /not JSON/],
    ["two values are not one", undefined, '{"a": 1}\n{"a": 2}', /not JSON/],
    ["an empty message", undefined, "  \n", /^the final message is empty/],
    ["no message at all", undefined, null, /^the final message is empty/],
  ];
  for (const [what, structured, reply, expected] of cases) {
    it(what, () => {
      const read = readAnswer(structured, reply);
      if (expected instanceof RegExp) {
        expect(read.ok).toBe(false);
        if (!read.ok) expect(read.message).toMatch(expected);
      } else {
        expect(read).toEqual({ ok: true, value: expected.value });
      }
    });
  }
});

describe("the words of an answer", () => {
  const errors = [
    { path: "/count", message: "must be >= 0" },
    { path: "", message: "must have required property 'verdict'" },
  ];

  it("the contract: the fixed head, then the schema", () => {
    const text = answerContract('{"type": "object"}\n');
    expect(text.startsWith(ANSWER_CONTRACT_HEAD)).toBe(true);
    expect(text).toBe(`${ANSWER_CONTRACT_HEAD}\n\nJSON Schema:\n{"type": "object"}\n`);
  });

  it("a repair brief: each error by its path, the schema, and only the JSON to answer", () => {
    expect(repairBrief(errors, '{"type": "object"}')).toBe(
      [
        "Your answer did not fit the JSON Schema it must be valid against. The validator said:",
        "- /count: must be >= 0",
        "- (root): must have required property 'verdict'",
        "",
        "Reply with only the corrected JSON value — no other text, no Markdown fence. The JSON Schema:",
        '{"type": "object"}',
        "",
      ].join("\n"),
    );
  });

  it("the record's message says what follows: a repair, nothing, or why no repair is possible", () => {
    const said =
      "the answer does not fit --answer-schema: /count must be >= 0; (root) must have required property 'verdict'";
    expect(answerInvalidMessage(errors, "repair")).toBe(`${said}; a repair turn follows on the same thread`);
    expect(answerInvalidMessage(errors, "no-repairs")).toBe(said);
    expect(answerInvalidMessage(errors, { unresumable: "its CLI never named its thread" })).toBe(
      `${said}; no repair is possible: its CLI never named its thread`,
    );
  });
});
