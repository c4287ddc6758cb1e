import type { MessageWire, QuestionWire } from "../../wire.js";
import { h } from "../dom.js";
import { clock } from "../format.js";
import { messageWords, responseWords } from "../steering-words.js";
import { empty } from "./part.js";

// A steerable dispatch's steering on its page (specs/ui.md, "A dispatch"): the messages sent to it and
// the questions it asked, each with its state. The words come from steering-words.ts, tested pure.

/** The messages sent to a steerable dispatch (`catherd send`): each with its state and when it got there. */
export function messageTable(messages: MessageWire[]): HTMLElement {
  if (messages.length === 0) return empty("no messages sent");
  return h(
    "table",
    { class: "messages" },
    h("thead", null, h("tr", null, h("th", null, "Message"), h("th", null, "State"), h("th", null, "At"))),
    h(
      "tbody",
      null,
      ...messages.map((m) => {
        const words = messageWords(m);
        return h(
          "tr",
          { class: `message m-${m.state}` },
          h("td", { class: "line" }, words.text),
          h("td", null, words.state),
          h("td", { class: "at" }, clock(m.at === null ? null : Date.parse(m.at))),
        );
      }),
    ),
  );
}

/** What it asked (`questions/`) and the answer each got, or that it waits for one. */
export function questionTable(questions: QuestionWire[]): HTMLElement {
  if (questions.length === 0) return empty("no questions asked");
  return h(
    "table",
    { class: "questions" },
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        h("th", null, "Question"),
        h("th", null, "Asks"),
        h("th", null, "Answer"),
        h("th", null, "Asked"),
      ),
    ),
    h(
      "tbody",
      null,
      ...questions.map((q) =>
        h(
          "tr",
          { class: `question${q.answer === null ? " waiting warn" : ""}` },
          h("td", null, `${q.id} (${q.kind})`),
          h("td", { class: "line" }, q.asks),
          h("td", null, responseWords(q)),
          h("td", { class: "at" }, clock(Date.parse(q.askedAt))),
        ),
      ),
    ),
  );
}
