import type { AccountsWire, AccountWire } from "../../wire.js";
import { gateWords, waitingWords, windowCells } from "../account-words.js";
import { h, link } from "../dom.js";

// The home's accounts on the runs page (specs/ui.md, "Accounts"): each CLI account with whether it takes
// work now, the queued dispatches its windows hold (each a link to its page), and its windows as its CLI
// last reported them. Every name here came from a file an agent's CLI wrote: each is a text node.

const GATE_CLASS = { open: "gate-open", probe: "gate-probe", held: "gate-held" } as const;

/** The accounts section's children at `now`; one line when the home has no account to show. */
export function accountsPanel(data: AccountsWire, now: number): HTMLElement[] {
  const title = h("h3", null, "Accounts");
  if (data.accounts.length === 0)
    return [
      title,
      h("p", { class: "empty" }, "No accounts declared and no window reported yet (catherd account add)."),
    ];
  return [title, ...data.accounts.map((a) => accountBlock(a, now))];
}

function accountBlock(a: AccountWire, now: number): HTMLElement {
  const waiting = waitingWords(a);
  return h(
    "div",
    { class: "account", "data-account": `${a.backend}/${a.name}` },
    h(
      "p",
      { class: "account-head" },
      h("strong", { class: "account-name" }, `${a.backend} ${a.name}`),
      h("span", { class: "dim account-dir" }, ` ${a.dir ?? "the environment's own"} `),
      h("span", { class: `gate ${GATE_CLASS[a.gate.state]}` }, gateWords(a.gate)),
    ),
    waiting === null
      ? null
      : h(
          "p",
          { class: "parked" },
          `${waiting}: `,
          ...a.parked.flatMap((p, i) => [
            i === 0 ? null : ", ",
            link(
              `/runs/${encodeURIComponent(p.run)}/dispatches/${encodeURIComponent(p.dispatchId)}`,
              `${p.run} / ${p.name}`,
            ),
          ]),
        ),
    a.windows.length === 0 ? h("p", { class: "dim" }, "no window reported yet") : windowTable(a, now),
  );
}

function windowTable(a: AccountWire, now: number): HTMLElement {
  return h(
    "table",
    { class: "windows" },
    h(
      "thead",
      null,
      h("tr", null, ...["Window", "Used", "Length", "Resets", "Status", "Seen"].map((t) => h("th", null, t))),
    ),
    h(
      "tbody",
      null,
      ...a.windows.map((w) =>
        h(
          "tr",
          { class: w.status === "rejected" ? "window-row bad" : "window-row" },
          h("td", { class: "window-name" }, w.name),
          ...windowCells(w, now).map((c) => h("td", null, c)),
        ),
      ),
    ),
  );
}
