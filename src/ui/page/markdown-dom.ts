import { inertText } from "../../domain/text/inert-text.js";
import { h } from "./dom.js";
import type { Block, Inline } from "./markdown.js";

// The reply as DOM, from the tree of markdown.ts: elements the page chooses, text nodes for everything the
// agent wrote. A link without a safe address is its text; a safe one opens in a new tab without a referrer.

export function renderMarkdown(blocks: readonly Block[]): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const block of blocks) fragment.append(renderBlock(block));
  return fragment;
}

function renderBlock(block: Block): Node {
  switch (block.t) {
    case "h":
      return h(`h${Math.min(6, block.level + 2)}` as "h3", null, ...block.c.map(renderInline));
    case "p":
      return h("p", null, ...block.c.map(renderInline));
    case "code":
      return h("pre", { class: "code" }, h("code", null, block.v));
    case "hr":
      return h("hr");
    case "quote":
      return h("blockquote", null, renderMarkdown(block.c));
    case "list": {
      const items = block.items.map((item) => h("li", null, renderMarkdown(item)));
      return block.ordered ? h("ol", { start: block.start }, ...items) : h("ul", null, ...items);
    }
  }
}

function renderInline(inline: Inline): Node {
  switch (inline.t) {
    case "text":
      return document.createTextNode(inertText(inline.v));
    case "code":
      return h("code", null, inline.v);
    case "em":
      return h("em", null, ...inline.c.map(renderInline));
    case "strong":
      return h("strong", null, ...inline.c.map(renderInline));
    case "br":
      return h("br");
    case "link":
      return inline.href === null
        ? h("span", { class: "unsafe-link" }, ...inline.c.map(renderInline))
        : h(
            "a",
            { href: inline.href, rel: "noopener noreferrer", target: "_blank" },
            ...inline.c.map(renderInline),
          );
  }
}
