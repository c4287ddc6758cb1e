import { h } from "../dom.js";

// The building blocks of a dispatch's page: a titled part, a "nothing here" line, a JSON file shown whole.

/** A part of the page under its title, classed `part part-<title's letters>` for the stylesheet and tests. */
export function section(title: string, ...body: (Node | null)[]): HTMLElement {
  return h(
    "section",
    { class: `part part-${title.replace(/[^a-z]/gi, "").toLowerCase()}` },
    h("h3", null, title),
    ...body,
  );
}

/** What a part shows when there is nothing to show, saying why. */
export function empty(text: string): HTMLElement {
  return h("p", { class: "empty" }, text);
}

/** A file read as JSON, indented; "not written" when it is not there. */
export function json(value: unknown): HTMLElement {
  return value === null || value === undefined
    ? empty("not written")
    : h("pre", { class: "text json" }, JSON.stringify(value, null, 2));
}
