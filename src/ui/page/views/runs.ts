import type { AccountsWire, PushWire, RunSummaryWire, RunsWire } from "../../wire.js";
import { getJson, type View } from "../app.js";
import { h, link, morph, replace } from "../dom.js";
import { count, since, usd } from "../format.js";
import { accountsPanel } from "./accounts.js";

/** The accounts' times ("seen 3m ago", "in 2h") are written again this often between pushes. */
const TICK_MS = 10_000;

/**
 * The runs of the home: live, queued and recorded counts, spend against budget, last change; then the
 * home's accounts. A `runs` push fetches the runs again, an `accounts` push the accounts.
 */
export class RunsView implements View {
  readonly stream = {};
  private root: HTMLElement | null = null;
  private readonly runsBox = h("div", { class: "runs-slot" });
  private readonly accountsBox = h("section", { class: "accounts" });
  private refetch: number | null = null;
  private refetchAccounts: number | null = null;
  private ticker: number | null = null;
  private accounts: AccountsWire | null = null;
  private offset = 0;

  async start(root: HTMLElement): Promise<void> {
    this.root = root;
    replace(root, this.runsBox, this.accountsBox);
    await Promise.all([this.load(), this.loadAccounts()]);
    this.ticker = window.setInterval(() => this.drawAccounts(), TICK_MS);
  }

  private async loadAccounts(): Promise<void> {
    const data = await getJson<AccountsWire>("/api/accounts");
    if (this.root === null) return;
    this.accounts = data;
    this.offset = data.now - Date.now();
    this.drawAccounts();
  }

  /** Draws the accounts again, keeping in place what did not change (a link being pressed). */
  private drawAccounts(): void {
    if (this.accounts === null) return;
    morph(this.accountsBox, ...accountsPanel(this.accounts, Date.now() + this.offset));
  }

  private async load(): Promise<void> {
    const data = await getJson<RunsWire>("/api/runs");
    if (this.root === null) return;
    replace(
      this.runsBox,
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
    if (push.type === "accounts" && this.refetchAccounts === null) {
      this.refetchAccounts = window.setTimeout(() => {
        this.refetchAccounts = null;
        void this.loadAccounts();
      }, 100);
    }
    if (push.type !== "runs" || this.refetch !== null) return;
    this.refetch = window.setTimeout(() => {
      this.refetch = null;
      void this.load();
    }, 100);
  }

  stop(): void {
    this.root = null;
    if (this.refetch !== null) clearTimeout(this.refetch);
    if (this.refetchAccounts !== null) clearTimeout(this.refetchAccounts);
    if (this.ticker !== null) clearInterval(this.ticker);
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
