import { describe, expect, it } from "vitest";
import { describeToolCall, oneLine, parseObject } from "../../src/backends/common.js";

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
