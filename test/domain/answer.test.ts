import { describe, expect, it } from "vitest";
import {
  ANSWER_CONTRACT_HEAD,
  answerContract,
  answerInvalidMessage,
  answerOverLimitMessage,
  keptAnswerErrors,
  MAX_ANSWER_DEPTH,
  nestsDeeperThan,
  readAnswer,
  repairBrief,
} from "../../src/domain/ending/answer-contract.js";
import { addFacts, emptySummary, MAX_REPLY_CHARS } from "../../src/domain/ending/summary.js";
import { valueDeeperThan } from "../../src/domain/text/json-depth.js";

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
      const read = readAnswer(structured, reply, null);
      if (expected instanceof RegExp) {
        expect(read.ok).toBe(false);
        if (!read.ok) expect(read.message).toMatch(expected);
      } else {
        expect(read).toEqual({ ok: true, value: expected.value });
      }
    });
  }
});

/** `{"c":{"c":…1…}}`, `levels` objects deep, as text. */
function nestedText(levels: number): string {
  return `${'{"c":'.repeat(levels)}1${"}".repeat(levels)}`;
}

/** The same as a value, built without recursion. */
function nestedValue(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i += 1) value = { c: value };
  return value;
}

describe("readAnswer over catherd's limits", () => {
  const MIB16 = 16 * 1024 * 1024;
  type Expected = { value: unknown } | { overLimit: boolean; message: RegExp };
  const cases: [string, unknown, string | null, number | null, Expected][] = [
    ["a message nested to the limit is read", undefined, nestedText(64), null, { value: nestedValue(64) }],
    [
      "a message nested one deeper is over the limit, before any parse",
      undefined,
      nestedText(65),
      null,
      { overLimit: true, message: /deeper than catherd's limit of 64 levels/ },
    ],
    [
      "20,000 deep is over the limit too (no stack is spent on it)",
      undefined,
      nestedText(20_000),
      null,
      { overLimit: true, message: /deeper than catherd's limit of 64 levels/ },
    ],
    [
      "brackets inside strings do not count",
      undefined,
      JSON.stringify({ s: "[".repeat(500), t: '\\"{{{{' }),
      null,
      { value: { s: "[".repeat(500), t: '\\"{{{{' } },
    ],
    [
      "a structured answer nested too deep",
      nestedValue(20_000),
      "",
      null,
      { overLimit: true, message: /deeper than catherd's limit of 64 levels/ },
    ],
    [
      "a structured answer longer than 1,000,000 characters of JSON",
      { x: "y".repeat(1_000_000) },
      "",
      null,
      { overLimit: true, message: /over catherd's limit of 1,000,000 characters of JSON \(1,000,008\)/ },
    ],
    [
      "a message catherd cut is over its limit, not a message that is not JSON",
      undefined,
      `${JSON.stringify({ x: "y".repeat(MAX_REPLY_CHARS) }).slice(0, MAX_REPLY_CHARS)}\n[reply cut by catherd]`,
      null,
      { overLimit: true, message: /^the final message is over catherd's limit of 1,000,000 characters/ },
    ],
    [
      "no message, and a line over the line limit was dropped: the limit, not an empty message",
      undefined,
      null,
      MIB16,
      { overLimit: true, message: /^a line of the CLI's output was over catherd's limit of 16 MiB a line/ },
    ],
    [
      "an earlier message that is not JSON, and a dropped line after it: the limit",
      undefined,
      "Let me write the answer.",
      MIB16,
      { overLimit: true, message: /limit of 16 MiB a line and was dropped/ },
    ],
    ["a dropped line does not matter when the message is an answer", undefined, "[1]", MIB16, { value: [1] }],
    [
      "prose with many brackets is not JSON: the worker's mistake, not a limit",
      undefined,
      `See ${"[".repeat(100)}`,
      null,
      { overLimit: false, message: /^the final message is not JSON/ },
    ],
    [
      "an empty message without a dropped line is the worker's",
      undefined,
      "",
      null,
      { overLimit: false, message: /empty/ },
    ],
  ];
  for (const [what, structured, reply, dropped, expected] of cases) {
    it(what, () => {
      const read = readAnswer(structured, reply, dropped);
      if ("value" in expected) expect(read).toEqual({ ok: true, value: expected.value });
      else {
        expect(read).toMatchObject({ ok: false, overLimit: expected.overLimit });
        if (!read.ok) expect(read.message).toMatch(expected.message);
      }
    });
  }

  it("counts depth by arrays and objects alike, in text and in values", () => {
    expect(MAX_ANSWER_DEPTH).toBe(64);
    expect(nestsDeeperThan("[[{}]]", 3)).toBe(false);
    expect(nestsDeeperThan("[[{[]}]]", 3)).toBe(true);
    expect(nestsDeeperThan('["[[[[", [[]]]', 3)).toBe(false);
    expect(nestsDeeperThan('["]]]]", [[]]]', 2)).toBe(true);
    expect(nestsDeeperThan(`prose ${"[".repeat(100)}`, 3)).toBe(false);
    expect(valueDeeperThan([[{}]], 3)).toBe(false);
    expect(valueDeeperThan([[{ a: [] }]], 3)).toBe(true);
    expect(valueDeeperThan("[[[[", 0)).toBe(false);
  });

  it("a reply cut by the summary is the one the reader calls over the limit", () => {
    const summary = emptySummary();
    addFacts(summary, { progress: true, reply: { text: "y".repeat(MAX_REPLY_CHARS + 1), mode: "replace" } });
    expect(readAnswer(undefined, summary.reply, null)).toMatchObject({ ok: false, overLimit: true });
  });
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

  it("keeps the first 20 errors, each path and message cut at 500 characters", () => {
    const long = "k".repeat(1_000_000);
    const many = Array.from({ length: 30 }, (_, i) => ({ path: `/${i}`, message: "must be number" }));
    expect(keptAnswerErrors(many)).toEqual(many.slice(0, 20));
    expect(
      keptAnswerErrors([{ path: `/${long}`, message: `must NOT have additional properties ("${long}")` }]),
    ).toEqual([
      { path: `/${"k".repeat(499)}…`, message: `must NOT have additional properties ("${"k".repeat(462)}…` },
    ]);
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
    expect(answerOverLimitMessage("the answer nests too deep")).toBe(
      "the answer is over catherd's limits: the answer nests too deep; no repair turn follows (the limit is catherd's, not a mistake of the worker's)",
    );
  });
});
