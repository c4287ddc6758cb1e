import type { DispatchWire, ToolCallWire } from "../../wire.js";
import { parsePatch } from "../diff.js";
import { h } from "../dom.js";
import { clock, duration } from "../format.js";
import { parseMarkdown } from "../markdown.js";
import { renderMarkdown } from "../markdown-dom.js";
import { empty, json, section } from "./part.js";
import { messageTable, questionTable } from "./steering-tables.js";
import { usageBlock } from "./usage-block.js";

// The parts of a dispatch's page below its head, in the order specs/ui.md lists them: the brief, the
// steering of a steerable one, events, tool calls, usage, the reply (Markdown, read safely by
// markdown.ts), changes.patch as a diff, the stderr tail, the notification's log, and its JSON files.

/** The parts in page order; null for one that does not apply to this dispatch. */
export function dispatchParts(d: DispatchWire): (HTMLElement | null)[] {
  return [
    section("Brief", d.brief === null ? empty("no brief") : h("pre", { class: "text brief" }, d.brief)),
    d.steering == null
      ? null
      : section("Messages", messageTable(d.steering.messages), questionTable(d.steering.questions)),
    section(
      "Events",
      eventList(d),
      d.stall === null
        ? null
        : h("p", { class: "warn stall" }, `stalled: quiet ${duration(d.stall.quietMs)} at ${d.stall.at}`),
    ),
    section("Tool calls", toolTable(d)),
    section("Usage", usageBlock(d.row.usage, d.usageOverTime)),
    section(
      "Reply",
      d.reply === null
        ? empty("no reply yet")
        : h("div", { class: "reply markdown" }, renderMarkdown(parseMarkdown(d.reply))),
    ),
    section("Changes", diffBlock(d)),
    section(
      "stderr",
      d.stderr.length === 0
        ? empty("nothing on stderr")
        : h("pre", { class: "text stderr" }, d.stderr.join("\n")),
    ),
    d.notify.claimed || d.notify.log.length > 0
      ? section("Notification", h("pre", { class: "text notify-log" }, d.notify.log.join("\n")))
      : null,
    section("record.json", json(d.record)),
    section("exit.json", json(d.exit)),
    section("spec.json", json(d.spec)),
  ];
}

/** Its event lines as `logs` words them, each dated, marks (retries, failures) as classes. */
function eventList(d: DispatchWire): HTMLElement {
  if (d.events.length === 0) return empty("no events yet");
  return h(
    "ol",
    { class: "events" },
    d.eventsOmitted > 0 ? h("li", { class: "dim" }, `${d.eventsOmitted} earlier lines not shown`) : null,
    ...d.events.map((e) =>
      h(
        "li",
        { class: `event${e.mark === null ? "" : ` mark-${e.mark}`}` },
        h("span", { class: "at" }, clock(e.atMs)),
        h("span", { class: "line" }, e.text),
      ),
    ),
  );
}

/** Its tool calls: each with when it opened and how long it took, or has been open until `now`. */
function toolTable(d: DispatchWire): HTMLElement {
  if (d.toolCalls.length === 0) return empty("no tool calls");
  return h(
    "table",
    { class: "tools" },
    h(
      "thead",
      null,
      h("tr", null, h("th", null, "Tool call"), h("th", null, "Opened"), h("th", null, "Took")),
    ),
    h(
      "tbody",
      null,
      ...d.toolCalls.map((t) =>
        h(
          "tr",
          { class: t.closed ? "closed" : "open" },
          h("td", { class: "tool" }, t.label),
          h("td", null, clock(t.openedAtMs)),
          h("td", null, tookText(t, d.now)),
        ),
      ),
    ),
  );
}

/** "3m12s" for a closed call, "open 42s" for one still open; "–" where a time is missing. */
function tookText(t: ToolCallWire, now: number): string {
  if (t.openedAtMs === null) return "–";
  if (!t.closed) return `open ${duration(now - t.openedAtMs)}`;
  return t.closedAtMs === null ? "–" : duration(t.closedAtMs - t.openedAtMs);
}

/** changes.patch as a diff (cut as diff.ts cuts it), or why there is none. */
function diffBlock(d: DispatchWire): HTMLElement {
  if (d.patch === null || d.patch === "")
    return empty(d.patchBytes === null ? "no changes.patch" : "no changes");
  const { lines, omitted, files } = parsePatch(d.patch);
  return h(
    "div",
    { class: "diff-box" },
    h("p", { class: "dim" }, `${files} file${files === 1 ? "" : "s"} changed`),
    h("pre", { class: "diff" }, ...lines.map((l) => h("span", { class: `d-${l.kind}` }, l.text, "\n"))),
    omitted > 0 ? h("p", { class: "dim" }, `${omitted} more lines not shown`) : null,
  );
}
