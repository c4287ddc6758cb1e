import { describe, expect, it } from "vitest";
import { inlines, parseMarkdown, safeHref } from "../../../src/ui/page/markdown.js";

// The reply's Markdown reader makes a tree of the page's own node kinds; what the agent wrote is only ever
// text in it, and a link keeps an http(s) or mailto address alone.

describe("parseMarkdown", () => {
  it("reads headings, paragraphs, lists, quotes, rules and fenced code", () => {
    expect(
      parseMarkdown(
        "# Title\n\nSome *em* and **strong** `code`.\n\n- a\n- b\n  - c\n\n> said\n\n---\n\n```ts\nlet x = 1;\n```\n1. one\n2. two",
      ),
    ).toEqual([
      { t: "h", level: 1, c: [{ t: "text", v: "Title" }] },
      {
        t: "p",
        c: [
          { t: "text", v: "Some " },
          { t: "em", c: [{ t: "text", v: "em" }] },
          { t: "text", v: " and " },
          { t: "strong", c: [{ t: "text", v: "strong" }] },
          { t: "text", v: " " },
          { t: "code", v: "code" },
          { t: "text", v: "." },
        ],
      },
      {
        t: "list",
        ordered: false,
        start: 1,
        items: [
          [{ t: "p", c: [{ t: "text", v: "a" }] }],
          [
            { t: "p", c: [{ t: "text", v: "b" }] },
            { t: "list", ordered: false, start: 1, items: [[{ t: "p", c: [{ t: "text", v: "c" }] }]] },
          ],
        ],
      },
      { t: "quote", c: [{ t: "p", c: [{ t: "text", v: "said" }] }] },
      { t: "hr" },
      { t: "code", lang: "ts", v: "let x = 1;" },
      {
        t: "list",
        ordered: true,
        start: 1,
        items: [[{ t: "p", c: [{ t: "text", v: "one" }] }], [{ t: "p", c: [{ t: "text", v: "two" }] }]],
      },
    ]);
  });

  it("keeps raw HTML as the text it is", () => {
    expect(parseMarkdown('<script>alert(1)</script> <img src=x onerror="alert(2)">')).toEqual([
      { t: "p", c: [{ t: "text", v: '<script>alert(1)</script> <img src=x onerror="alert(2)">' }] },
    ]);
  });

  it("keeps a link's address only when it is http, https or mailto", () => {
    expect(
      inlines(
        "[a](javascript:alert(1)) [b](https://x.example/p?q=1) <mailto:me@x.example> [c](data:text/html,hi)",
      ),
    ).toEqual([
      { t: "link", href: null, c: [{ t: "text", v: "a" }] },
      { t: "text", v: ") " },
      { t: "link", href: "https://x.example/p?q=1", c: [{ t: "text", v: "b" }] },
      { t: "text", v: " " },
      { t: "link", href: "mailto:me@x.example", c: [{ t: "text", v: "mailto:me@x.example" }] },
      { t: "text", v: " " },
      { t: "link", href: null, c: [{ t: "text", v: "c" }] },
    ]);
    for (const bad of [
      "java\tscript:alert(1)",
      " javascript:x",
      "JAVASCRIPT:x",
      "vbscript:x",
      "//evil.example",
      "/local",
    ]) {
      expect(safeHref(bad), bad).toBeNull();
    }
    expect(safeHref("HTTPS://x.example")).toBe("HTTPS://x.example");
  });

  it("reads a hostile reply in bounded time and depth: unmatched marks, deep nesting, one huge line", () => {
    const started = performance.now();
    parseMarkdown("*_`[".repeat(50_000));
    parseMarkdown(`${"> ".repeat(5_000)}deep`);
    parseMarkdown(`${"- ".repeat(2_000)}deep`);
    parseMarkdown("x".repeat(2_000_000));
    // Generous: what fails is quadratic time, minutes not seconds.
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});
