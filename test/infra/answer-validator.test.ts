import { describe, expect, it } from "vitest";
import { compileAnswerSchema } from "../../src/infra/answer-validator.js";

// The validator of --answer-schema (ajv's build of the schema's draft: 2020-12, 2019-09 or draft-07):
// what it accepts, what it refuses, and the errors as the record keeps them ({path, message}).

async function errorsOf(schema: unknown, value: unknown) {
  const compiled = await compileAnswerSchema(schema);
  if (!compiled.ok) throw new Error(compiled.problem);
  return compiled.validator.validate(value);
}

describe("compileAnswerSchema", () => {
  const person = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: { name: { type: "string", minLength: 1 } },
    type: "object",
    properties: {
      name: { $ref: "#/$defs/name" },
      tags: { type: "array", prefixItems: [{ const: "first" }], items: { type: "string" } },
      email: { type: "string", format: "email" },
    },
    required: ["name"],
    dependentRequired: { email: ["name"] },
    unevaluatedProperties: false,
  };
  const cases: [string, unknown, unknown, { path: string; message: string }[]][] = [
    ["a value that fits: []", person, { name: "a", tags: ["first", "x"] }, []],
    [
      "$ref into $defs",
      person,
      { name: "" },
      [{ path: "/name", message: "must NOT have fewer than 1 characters" }],
    ],
    [
      "prefixItems (2020-12)",
      person,
      { name: "a", tags: ["second"] },
      [{ path: "/tags/0", message: "must be equal to constant" }],
    ],
    [
      "items after prefixItems",
      person,
      { name: "a", tags: ["first", 2] },
      [{ path: "/tags/1", message: "must be string" }],
    ],
    [
      "unevaluatedProperties names the extra one",
      person,
      { name: "a", extra: 1 },
      [{ path: "", message: "must NOT have unevaluated properties" }],
    ],
    [
      "every error, not only the first",
      { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["c"] },
      { a: "x", b: "y" },
      [
        { path: "", message: "must have required property 'c'" },
        { path: "/a", message: "must be number" },
        { path: "/b", message: "must be number" },
      ],
    ],
    [
      "additionalProperties names the extra one",
      { type: "object", additionalProperties: false },
      { x: 1 },
      [{ path: "", message: 'must NOT have additional properties ("x")' }],
    ],
    [
      "enum lists what is allowed",
      { enum: ["a", "b"] },
      "c",
      [{ path: "", message: 'must be equal to one of the allowed values: "a", "b"' }],
    ],
    // format is an annotation in 2020-12 (the format-annotation vocabulary): not asserted.
    ["format is not asserted", person, { name: "a", email: "not an address" }, []],
    ["a schema of true takes anything", true, { any: "thing" }, []],
    [
      "a schema without $schema is read as 2020-12",
      { type: "array", prefixItems: [{ type: "number" }] },
      ["x"],
      [{ path: "/0", message: "must be number" }],
    ],
    ["unknown keywords are ignored", { type: "string", "x-note": "mine" }, "s", []],
    // draft-07, the draft most tools write: its own keywords, in its own meaning.
    [
      "a draft-07 schema is checked as draft-07: definitions and $ref",
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        definitions: { count: { type: "integer", minimum: 0 } },
        type: "object",
        properties: { count: { $ref: "#/definitions/count" } },
        required: ["count"],
      },
      { count: -1 },
      [{ path: "/count", message: "must be >= 0" }],
    ],
    [
      "a draft-07 items array is a tuple, as draft-07 has it",
      { $schema: "https://json-schema.org/draft-07/schema", type: "array", items: [{ type: "number" }] },
      ["x", "y"],
      [{ path: "/0", message: "must be number" }],
    ],
    [
      "a 2019-09 schema is checked as 2019-09",
      { $schema: "https://json-schema.org/draft/2019-09/schema", type: "object", required: ["a"] },
      {},
      [{ path: "", message: "must have required property 'a'" }],
    ],
  ];
  for (const [what, schema, value, expected] of cases) {
    it(what, async () => {
      expect(await errorsOf(schema, value)).toEqual(expected);
    });
  }

  const bad: [string, unknown, RegExp][] = [
    ["a type that is no type", { type: "objekt" }, /^data\/type must be equal to one of the allowed values/],
    ["a minimum that is not a number", { minimum: "1" }, /data\/minimum must be number/],
    ["a $ref that resolves to nothing", { $ref: "#/$defs/none" }, /can't resolve reference #\/\$defs\/none/],
    [
      "a draft it does not check, in its own words, naming those it does",
      { $schema: "http://json-schema.org/draft-04/schema#" },
      /^its \$schema "http:\/\/json-schema.org\/draft-04\/schema#" names no draft catherd checks; it checks draft 2020-12 .*draft 2019-09 .*draft-07/,
    ],
    ["a $schema that is no text", { $schema: 7 }, /^its \$schema 7 names no draft catherd checks/],
    [
      "a draft-07 schema that breaks draft-07's meta-schema",
      { $schema: "http://json-schema.org/draft-07/schema#", type: "objekt" },
      /^data\/type must be equal to one of the allowed values/,
    ],
    ["an array is no schema", [], /a JSON Schema is an object/],
    ["a number is no schema", 3, /a JSON Schema is an object/],
  ];
  for (const [what, schema, problem] of bad) {
    it(`refuses ${what}`, async () => {
      const compiled = await compileAnswerSchema(schema);
      expect(compiled.ok).toBe(false);
      if (!compiled.ok) expect(compiled.problem).toMatch(problem);
    });
  }

  // The agent chooses the answer: no keyword's check may take time that grows faster than the answer.
  describe("in time linear in the answer", () => {
    it("matches pattern with RE2: ^(a+)+$ against 100,000 characters that do not match takes no time", async () => {
      const schema = { type: "string", pattern: "^(a+)+$" };
      const started = performance.now();
      expect(await errorsOf(schema, `${"a".repeat(100_000)}!`)).toEqual([
        { path: "", message: 'must match pattern "^(a+)+$"' },
      ]);
      expect(await errorsOf(schema, "a".repeat(100_000))).toEqual([]);
      // ECMAScript's engine takes seconds for 29 characters, doubling with each one.
      expect(performance.now() - started).toBeLessThan(2000);
    });

    it("matches patternProperties with RE2 too", async () => {
      const schema = { type: "object", patternProperties: { "^(a|a)+$": { type: "number" } } };
      const started = performance.now();
      expect(
        await errorsOf(schema, { [`${"a".repeat(50_000)}`]: "x", [`${"a".repeat(50_000)}b`]: "y" }),
      ).toEqual([{ path: `/${"a".repeat(50_000)}`, message: "must be number" }]);
      expect(performance.now() - started).toBeLessThan(2000);
    });

    it("a pattern is a search, Unicode-aware, as JSON Schema means it", async () => {
      expect(await errorsOf({ pattern: "b" }, "abc")).toEqual([]);
      expect(await errorsOf({ pattern: "^\\p{Lu}\\d{2}$" }, "É42")).toEqual([]);
      expect(await errorsOf({ pattern: "^\\d+$" }, "4x2")).toEqual([
        { path: "", message: 'must match pattern "^\\d+$"' },
      ]);
    });

    it("finds duplicates in one pass: 100,000 distinct arrays, and equal objects whatever their key order", async () => {
      const many = Array.from({ length: 100_000 }, (_, i) => [i]);
      const started = performance.now();
      expect(await errorsOf({ type: "array", uniqueItems: true }, many)).toEqual([]);
      // ajv's check of every pair took 7 s for 20,000 of them.
      expect(performance.now() - started).toBeLessThan(3000);
      expect(
        await errorsOf(
          { type: "object", properties: { a: { uniqueItems: true } } },
          { a: [1, { x: 1, y: [2] }, { y: [2], x: 1 }] },
        ),
      ).toEqual([{ path: "/a", message: "must NOT have duplicate items (items ## 1 and 2 are identical)" }]);
      expect(await errorsOf({ uniqueItems: true }, [1, "1", [1], { 1: 1 }, null, false, 0])).toEqual([]);
      expect(await errorsOf({ uniqueItems: false }, [1, 1])).toEqual([]);
      expect(await errorsOf({ uniqueItems: true }, "not an array")).toEqual([]);
    });

    it("refuses a pattern RE2 does not take, saying why", async () => {
      const compiled = await compileAnswerSchema({ type: "string", pattern: "^(?=a)a$" });
      expect(compiled.ok).toBe(false);
      if (!compiled.ok) {
        expect(compiled.problem).toMatch(
          /^pattern "\^\(\?=a\)a\$" is not supported: catherd matches patterns with RE2, in time linear in the answer \(no lookaround, no backreferences\)/,
        );
      }
    });
  });
});
