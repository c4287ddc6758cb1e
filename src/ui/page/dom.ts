import { inertText } from "../../domain/text/inert-text.js";

// The page's only way of making elements. Children that are strings become text nodes — never markup —
// after inertText; attributes are set one by one with setAttribute (never a `style` attribute, which the
// CSP forbids, never an event handler). No innerHTML anywhere in the page.

export type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined>;

function fill(el: Element, attrs: Attrs | null, children: Child[]): void {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? "" : inertText(String(value)));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === "object" ? child : document.createTextNode(inertText(String(child))));
  }
}

/** An HTML element with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  fill(el, attrs, children);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element with attributes (presentation attributes, not style) and children. */
export function svg(tag: string, attrs: Attrs | null = null, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag) as SVGElement;
  fill(el, attrs, children);
  return el;
}

/** Replaces the children of `el`. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  fill(el, null, children);
}

/** A link to one of the page's own routes; followed without reloading the page. */
export function link(href: string, ...children: Child[]): HTMLAnchorElement {
  return h("a", { href, "data-route": true }, ...children);
}

/**
 * Makes `el`'s children `children`, keeping every old child equal to its new counterpart (isEqualNode:
 * same tag, attributes and text, all the way down). A live redraw then leaves what did not change in
 * place — the link under a pressed mouse button, a focused button, a selection — so that a push arriving
 * between a press and its release never swallows the click.
 */
export function morph(el: Element, ...children: Child[]): void {
  const fresh = document.createDocumentFragment();
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    fresh.append(typeof child === "object" ? child : document.createTextNode(inertText(String(child))));
  }
  const next = [...fresh.childNodes];
  next.forEach((node, i) => {
    const old = el.childNodes[i];
    if (old === undefined) el.append(node);
    else if (!old.isEqualNode(node)) old.replaceWith(node);
  });
  while (el.childNodes.length > next.length) el.lastChild?.remove();
}

/** Gives `old` the attributes and children of `fresh` (morphed: its unchanged children stay). */
export function morphElement(old: Element, fresh: Element): void {
  for (const name of old.getAttributeNames()) if (!fresh.hasAttribute(name)) old.removeAttribute(name);
  for (const name of fresh.getAttributeNames()) {
    const value = fresh.getAttribute(name) ?? "";
    if (old.getAttribute(name) !== value) old.setAttribute(name, value);
  }
  morph(old, ...fresh.childNodes);
}
