import type { DispatchWire, RowWire } from "../../wire.js";
import { cancel, confirmCancel, notifyButton, toast } from "../app.js";
import { h, link } from "../dom.js";
import { chainText, outcomeWords } from "./run.js";

// The head of a dispatch's page: who it is and where it stands — its name and state, its buttons, its
// summary line, the worker's declared outcome, the attempts of its chain, its folder.

/** The head's blocks in page order; null for one that does not apply to this dispatch. */
export function dispatchHead(d: DispatchWire, run: string): (HTMLElement | null)[] {
  return [
    titleRow(d.row, run),
    summaryLine(d.row, run),
    outcomeLine(d.row),
    checkLine(d.row),
    attemptLinks(d, run),
    h("p", { class: "dim" }, "folder ", d.dir),
  ];
}

/** Its name with a pill of its status (its state while live), then the notify and Cancel buttons. */
function titleRow(r: RowWire, run: string): HTMLElement {
  const button = cancelButton(r, run);
  const state = r.state === "recorded" ? (r.status ?? "recorded") : r.state;
  return h(
    "div",
    { class: "title-row" },
    h(
      "h2",
      null,
      r.name,
      " ",
      h("span", { class: `pill ${r.status !== null ? `s-${r.status}` : `st-${r.state}`}` }, state),
    ),
    h("div", null, notifyButton(), button),
  );
}

/** A live dispatch's Cancel button, which asks the person first (null once it is recorded). */
function cancelButton(r: RowWire, run: string): HTMLElement | null {
  if (r.state === "recorded") return null;
  const button = h("button", { class: "danger cancel", type: "button" }, "Cancel");
  button.addEventListener("click", () => {
    void confirmCancel(r.name).then(async (yes) => {
      if (yes) toast(`${r.name}: ${await cancel(run, r.dispatchId)}`);
    });
  });
  return button;
}

/**
 * "‹id› · ‹chain› · run ‹run›", then why it waits while queued ("queued #1: codex default out of window
 * …", as `show` says it), why it ended and its error, when it has them.
 */
function summaryLine(r: RowWire, run: string): HTMLElement {
  return h(
    "p",
    { class: "summary" },
    `${r.dispatchId} · ${chainText(r)} · run `,
    link(`/runs/${encodeURIComponent(run)}`, run),
    r.queue === null ? "" : ` · ${r.queue.blocker}`,
    r.reason === null ? "" : ` · ${r.reason}`,
    r.error === null ? "" : ` · ${r.error.kind ?? ""}: ${r.error.message}`,
  );
}

/** The worker's declared outcome of an `--outcome` dispatch, or that it declared none (null: not asked for). */
function outcomeLine(r: RowWire): HTMLElement | null {
  if (r.outcome === undefined) return null;
  return h(
    "p",
    { class: "outcome" },
    r.outcome === null
      ? "Outcome: none — the final message carried no STATUS line (asked for with --outcome)"
      : `Outcome, the worker's word: ${outcomeWords(r.outcome, " — ")}`,
  );
}

/** Its check (`--verify`): "Check: passed — npm test (2 runs)" (null: none). */
function checkLine(r: RowWire): HTMLElement | null {
  const check = r.check ?? null;
  if (check === null) return null;
  const word =
    check.passed === true
      ? "passed"
      : check.passed === false
        ? "failed"
        : r.state === "verifying"
          ? "running"
          : "no verdict";
  const runs = check.runs === 0 ? "" : ` (${check.runs} run${check.runs === 1 ? "" : "s"})`;
  return h("p", { class: "check" }, `Check: ${word} — ${check.command.split("\n")[0] ?? ""}${runs}`);
}

/** "Attempts: 1. codex quota → 2. claude-code ok", each a link (null for a chain of one). */
function attemptLinks(d: DispatchWire, run: string): HTMLElement | null {
  if (d.attempts.length <= 1) return null;
  return h(
    "p",
    { class: "attempts" },
    "Attempts: ",
    ...d.attempts.flatMap((a, i) => [
      i > 0 ? " → " : "",
      link(
        `/runs/${encodeURIComponent(run)}/dispatches/${encodeURIComponent(a.dispatchId)}`,
        `${a.attempt}. ${a.backend ?? "?"} ${a.kind ?? a.status ?? "running"}`,
      ),
    ]),
  );
}
