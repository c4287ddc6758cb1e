import { describe, expect, it } from "vitest";
import { jsonText } from "../../src/cli/json-text.js";

describe("jsonText", () => {
  it("writes C1 controls as escapes, the same value to a JSON reader", () => {
    const value = { line: "a\u009b2Jb\u0085c", esc: "\u001b]0;t\u0007", plain: "é€😀" };
    const text = jsonText(value);
    expect(text).toBe(String.raw`{"line":"a\u009b2Jb\u0085c","esc":"\u001b]0;t\u0007","plain":"é€😀"}`);
    expect(JSON.parse(text)).toEqual(value);
    expect(jsonText({ n: 1 })).toBe('{"n":1}');
  });
});
