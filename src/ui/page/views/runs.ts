import type { PushWire, RunSummaryWire, RunsWire } from "../../wire.js";
import { getJson, type View } from "../app.js";
import { h, link, replace } from "../dom.js";
import { count, since, usd } from "../format.js";

/** The runs of the home: live, queued and recorded counts, spend against budget, last change. */
export class RunsView implements View {
  readonly stream = {};
  private root: HTMLElement | null = null;
  private refetch: number | null = null;

  async start(root: HTMLElement): Promise<void> {
    this.root = root;
    await this.load();
  }

  private async load(): Promise<void> {
    const data = await getJson<RunsWire>("/api/runs");
    if (this.root === null) return;
    replace(
      this.root,
      h("h2", null, "Runs"),
      h("p", { class: "dim" }, "home ", data.home),
      data.runs.length === 0
        ? h("p", { class: "empty" }, "No runs yet: catherd dispatch makes one.")
        : h(
            "table",
            { class: "runs" },
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                ...["Run", "Live", "Queued", "Recorded", "Failed", "Tokens", "Spend", "Last change"].map(
                  (t) => h("th", null, t),
                ),
              ),
            ),
            h("tbody", null, ...data.runs.map((r) => row(r, data.now))),
          ),
    );
  }

  push(push: PushWire): void {
    if (push.type !== "runs" || this.refetch !== null) return;
    this.refetch = window.setTimeout(() => {
      this.refetch = null;
      void this.load();
    }, 100);
  }

  stop(): void {
    this.root = null;
    if (this.refetch !== null) clearTimeout(this.refetch);
  }
}

function row(r: RunSummaryWire, now: number): HTMLElement {
  const budget = Object.entries(r.budget)
    .map(([k, v]) => (k === "usd" ? usd(v) : k === "tokens" ? `${count(v)} tokens` : `${v} ${k}`))
    .join(", ");
  return h(
    "tr",
    { class: "run-row", "data-run": r.run },
    h(
      "td",
      null,
      link(`/runs/${encodeURIComponent(r.run)}`, r.run),
      r.loading ? h("span", { class: "dim" }, " loading…") : null,
    ),
    h("td", { class: r.live > 0 ? "live" : "" }, r.live),
    h("td", null, r.queued),
    h("td", null, r.recorded),
    h("td", { class: r.failed > 0 ? "bad" : "" }, r.failed),
    h("td", null, count(r.tokens)),
    h("td", null, usd(r.costUsd), budget === "" ? null : h("span", { class: "dim" }, ` of ${budget}`)),
    h(
      "td",
      { class: "age", "data-since": r.lastChangedAt ?? "" },
      r.lastChangedAt === null ? "–" : `${since(r.lastChangedAt, now)} ago`,
    ),
  );
}
