import { describe, expect, it } from "vitest";
import { claudeCodeBackend as claude } from "../../src/backends/claude-code.js";
import { codexBackend as codex } from "../../src/backends/codex.js";
import { describeToolCall, oneLine, parseObject } from "../../src/backends/line-parsing.js";
import {
  cutDeeperThan,
  DEEP_MARKER,
  MAX_LINE_DEPTH,
  valueDeeperThan,
} from "../../src/domain/text/json-depth.js";

/** `{"c":{"c":…1…}}`, `levels` deep, as text. */
function nestedText(levels: number): string {
  return `${'{"c":'.repeat(levels)}1${"}".repeat(levels)}`;
}

/** The depth of a value's `c` chain, and what ends it. */
function chain(value: unknown): { depth: number; end: unknown } {
  let depth = 0;
  let item = value;
  while (typeof item === "object" && item !== null) {
    depth += 1;
    item = (item as { c: unknown }).c;
  }
  return { depth, end: item };
}

describe("describeToolCall", () => {
  it.each([
    ["Bash", { command: "npm test", description: "run the tests" }, "$ npm test"],
    ["run_shell_command", { command: "sleep 3; echo hi" }, "$ sleep 3; echo hi"],
    ["Edit", { file_path: "src/a.ts", old_string: "a", new_string: "b" }, "edit src/a.ts"],
    ["write_file", { file_path: "src/b.ts", content: "…" }, "edit src/b.ts"],
    ["edit", { filePath: "src/c.ts" }, "edit src/c.ts"],
    ["Read", { file_path: "README.md" }, "read README.md"],
    ["Grep", { pattern: "TODO", path: "src" }, "search TODO"],
    ["google_web_search", { query: "vitest fake timers" }, "search vitest fake timers"],
    ["WebFetch", { url: "https://example.com", prompt: "summarise" }, "fetch https://example.com"],
    ["Task", { description: "explore the repo", prompt: "…" }, "Task explore the repo"],
    ["TodoWrite", { todos: [] }, "TodoWrite"],
  ] as const)("describes %s as a short human line", (name, input, label) => {
    expect(describeToolCall(name, input)).toBe(label);
  });

  it("falls back to the tool's name when there is no input", () => {
    expect(describeToolCall("mystery", null)).toBe("mystery");
  });

  it("flattens and shortens a long command to one line", () => {
    expect(describeToolCall("Bash", { command: `echo ${"x".repeat(100)}\necho done` })).toBe(
      `$ ${oneLine(`echo ${"x".repeat(100)} echo done`)}`,
    );
  });
});

describe("parseObject", () => {
  it("returns only JSON objects, null for torn or other JSON", () => {
    expect(parseObject('  {"a":1}  ')).toEqual({ a: 1 });
    expect(parseObject('{"a":')).toBeNull();
    expect(parseObject("[1]")).toBeNull();
    expect(parseObject("null")).toBeNull();
  });
});

describe("oneLine", () => {
  const cases: [string, string][] = [
    ["ls -la", "ls -la"],
    ["  padded  ", "padded"],
    ["two  spaces", "two spaces"],
    ["tab\there", "tab here"],
    ["line\nbreak\r\nand more", "line break and more"],
    ["nbsp\u00a0kept as space", "nbsp kept as space"],
    ["x".repeat(60), "x".repeat(60)],
    ["x".repeat(61), `${"x".repeat(59)}…`],
    [`${"y ".repeat(200)}`, `${"y ".repeat(30).slice(0, 59)}…`],
  ];
  for (const [text, expected] of cases) {
    it(`turns ${JSON.stringify(text.slice(0, 24))} into one line of at most 60 characters`, () => {
      expect(oneLine(text)).toBe(expected);
    });
  }
});

describe("parseObject bounds the depth of a line", () => {
  it.each([
    ["a shallow line, whole", 3, { depth: 3, end: 1 }],
    ["a line at the limit, whole", MAX_LINE_DEPTH, { depth: MAX_LINE_DEPTH, end: 1 }],
    [
      "a line one level over, cut at the limit",
      MAX_LINE_DEPTH + 1,
      { depth: MAX_LINE_DEPTH, end: DEEP_MARKER },
    ],
    ["a line 20,000 deep, cut at the limit", 20_000, { depth: MAX_LINE_DEPTH, end: DEEP_MARKER }],
  ])("keeps %s", (_, levels, kept) => {
    const value = parseObject(nestedText(levels));
    expect(chain(value)).toEqual(kept);
    expect(() => JSON.stringify(value)).not.toThrow();
  });

  it("cuts arrays and every deep branch, and keeps the shallow fields beside them", () => {
    const deepArray = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const value = parseObject(`{"a":${deepArray},"b":${nestedText(20_000)},"n":1,"__proto__":${deepArray}}`);
    expect(valueDeeperThan(value, MAX_LINE_DEPTH)).toBe(false);
    expect(value?.n).toBe(1);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(JSON.stringify(value)).toContain(`"__proto__":`);
  });

  it("says whether it cut, and cuts exactly below the limit", () => {
    const value = { a: { b: { c: 1 } }, d: [[2]] };
    expect(cutDeeperThan(value, 2, "x")).toBe(true);
    expect(value).toEqual({ a: { b: "x" }, d: ["x"] });
    expect(cutDeeperThan(value, 2, "x")).toBe(false);
    expect(cutDeeperThan(7, 1, "x")).toBe(false);
  });

  it("turns a Claude permission ask 20,000 deep into a question that can be written", () => {
    const line = `{"type":"control_request","request_id":"req_1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls","deep":${nestedText(20_000)}},"tool_use_id":"toolu_1"}}`;
    const facts = claude.parse(line);
    expect(facts.asks).toMatchObject({ kind: "permission", tool: "Bash" });
    expect(JSON.stringify(facts)).toContain(DEEP_MARKER);
  });

  it("parses a codex tool call 20,000 deep into facts that can be written", () => {
    const line = `{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"s","tool":"t","arguments":${nestedText(20_000)},"status":"in_progress"}}`;
    expect(() => JSON.stringify(codex.parse(line))).not.toThrow();
  });
});
