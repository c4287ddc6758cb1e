import type { BarWire, PushWire, RowWire, RunWire } from "../../wire.js";
import { cancel, confirmCancel, getJson, go, notifyButton, notifyEnded, toast, type View } from "../app.js";
import { h, link, morphElement, replace } from "../dom.js";
import { count, duration, since, usd } from "../format.js";
import { type RaceGroup, raceState, raceWords, type TableLine, tableLines } from "../race-rows.js";
import { askingWords, sandboxWords } from "../steering-words.js";
import { renderTimeline } from "../timeline.js";

// A run: its timeline, then its dispatches, live first — one row per chain — with what each is doing now.
// Pushes replace the rows and bars that changed; only their table rows are drawn again (their unchanged
// cells kept in place), the timeline is redrawn at most a few times a second.

const REDRAW_MS = 250;
/** Table rows built per frame while a long run's page is drawn. */
const CHUNK = 150;

export class RunView implements View {
  readonly stream: { run: string };
  private root: HTMLElement | null = null;
  private readonly rows = new Map<string, RowWire>();
  private readonly bars = new Map<string, BarWire>();
  private readonly trs = new Map<string, HTMLTableRowElement>();
  /** Each race's own line (race-rows.ts), and the races opened into their attempts. */
  private readonly raceTrs = new Map<string, HTMLTableRowElement>();
  private readonly openRaces = new Set<string>();
  private tbody: HTMLTableSectionElement | null = null;
  private timelineBox: HTMLElement | null = null;
  private summary: HTMLElement | null = null;
  private redraw: number | null = null;
  private ticker: number | null = null;
  private offset = 0;
  private missing = false;
  private loading = true;
  private readonly pending: PushWire[] = [];

  constructor(private readonly run: string) {
    this.stream = { run };
  }

  async start(root: HTMLElement): Promise<void> {
    this.root = root;
    this.missing = false;
    this.loading = true;
    let data: RunWire;
    try {
      data = await getJson<RunWire>(`/api/runs/${encodeURIComponent(this.run)}`);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("404")) throw error;
      // Not there yet: it appears with its first dispatch (the runs push says so).
      this.missing = true;
      this.loading = false;
      replace(
        root,
        h("h2", null, "Run ", this.run),
        h("p", { class: "empty" }, "No dispatch in this run yet."),
      );
      return;
    }
    this.loading = false;
    if (this.root === null) return;
    this.offset = data.now - Date.now();
    for (const r of data.rows) this.rows.set(r.dispatchId, r);
    for (const b of data.bars) this.bars.set(b.dispatchId, b);
    this.tbody = h("tbody");
    this.tbody.addEventListener("click", (event) => this.toggleRaceOn(event));
    this.timelineBox = h("div", { class: "timeline-slot" });
    this.summary = h("p", { class: "summary" });
    replace(
      root,
      h("div", { class: "title-row" }, h("h2", null, "Run ", this.run), notifyButton()),
      this.summary,
      h("h3", null, "Timeline"),
      this.timelineBox,
      h("h3", null, "Dispatches"),
      h(
        "table",
        { class: "dispatches" },
        h(
          "thead",
          null,
          h(
            "tr",
            null,
            ...["Name", "Backend", "State", "Age", "Doing / result", "Tokens", "Cost", ""].map((t) =>
              h("th", null, t),
            ),
          ),
        ),
        this.tbody,
      ),
    );
    this.grow();
    this.drawTimeline();
    this.ticker = window.setInterval(() => this.tick(), 1000);
    // Pushes that came while the run was fetched: those newer than the answer still apply.
    for (const push of this.pending.splice(0))
      if (push.type !== "rows" || push.now >= data.now) this.push(push);
  }

  private now(): number {
    return Date.now() + this.offset;
  }

  push(push: PushWire): void {
    if (this.root === null) return;
    if (this.missing) {
      if (push.type === "runs") void this.start(this.root);
      return;
    }
    if (this.loading) {
      this.pending.push(push);
      return;
    }
    if (push.type === "ended" && push.run === this.run) {
      notifyEnded(push);
      toast(`${push.name}: ${push.status}`);
      return;
    }
    if (push.type !== "rows" || push.run !== this.run) return;
    this.offset = push.now - Date.now();
    for (const id of push.removed) this.rows.delete(id);
    for (const id of push.removedBars) this.bars.delete(id);
    for (const r of push.rows) this.rows.set(r.dispatchId, r);
    for (const b of push.bars) this.bars.set(b.dispatchId, b);
    this.drawRows([...push.rows.map((r) => r.dispatchId), ...push.removed]);
    if (this.redraw === null) {
      this.redraw = window.setTimeout(() => {
        this.redraw = null;
        this.drawTimeline();
      }, REDRAW_MS);
    }
  }

  /**
   * Builds the next CHUNK table rows not built yet, in order, and comes back for more after the browser has
   * drawn a frame: the first screenful paints at once however long the run is.
   */
  private grow(): void {
    if (this.tbody === null) return;
    const missing = [...this.rows.values()]
      .sort(order)
      .filter((r) => !this.trs.has(r.dispatchId))
      .slice(0, CHUNK);
    this.drawRows(missing.map((r) => r.dispatchId));
    if (this.trs.size < this.rows.size) requestAnimationFrame(() => setTimeout(() => this.grow(), 0));
  }

  /** Draws the table rows of `changed` again, then puts every row in order (live first, newest first). */
  private drawRows(changed: string[]): void {
    const tbody = this.tbody;
    if (tbody === null) return;
    for (const id of changed) {
      const row = this.rows.get(id);
      const drawn = this.trs.get(id);
      if (row === undefined) {
        drawn?.remove();
        this.trs.delete(id);
      } else if (drawn === undefined) this.trs.set(id, this.tr(row));
      else morphElement(drawn, this.tr(row)); // its unchanged cells stay: a click on them is not lost
    }
    const ordered = [...this.rows.values()].sort(order);
    this.placeLines(tbody, tableLines(ordered));
    const live = ordered.filter((r) => r.state !== "recorded" && r.state !== "queued").length;
    const queued = ordered.filter((r) => r.state === "queued").length;
    const cost = ordered.reduce((sum, r) => sum + (r.usage?.costUsd ?? 0), 0);
    if (this.summary !== null)
      replace(
        this.summary,
        `${live} live, ${queued} queued, ${ordered.length - live - queued} recorded`,
        cost > 0 ? ` · ${usd(cost)}` : "",
      );
  }

  /**
   * Puts every line in order: a race's own line where its first attempt stands, its attempts after it,
   * hidden until it is opened. A race's line is drawn again each time (there are few).
   */
  private placeLines(tbody: HTMLTableSectionElement, lines: TableLine[]): void {
    const races = new Set<string>();
    let previous: Element | null = null;
    for (const line of lines) {
      let tr: HTMLTableRowElement | undefined;
      if (line.kind === "race") {
        races.add(line.group.key);
        tr = this.raceTr(line.group);
      } else {
        tr = this.trs.get(line.row.dispatchId);
        if (tr !== undefined) tr.hidden = line.race !== null && !this.openRaces.has(line.race);
      }
      if (tr === undefined) continue;
      const want: Element | null = previous === null ? tbody.firstElementChild : previous.nextElementSibling;
      if (want !== tr) tbody.insertBefore(tr, want);
      previous = tr;
    }
    for (const [key, tr] of this.raceTrs) {
      if (races.has(key)) continue;
      tr.remove();
      this.raceTrs.delete(key);
    }
  }

  /** A race's own line: its name (a button that opens it into its attempts), how its attempts stand, their sum. */
  private raceTr(group: RaceGroup): HTMLTableRowElement {
    const open = this.openRaces.has(group.key);
    const first = group.rows[0];
    const tokens = group.rows.reduce(
      (sum, r) => sum + (r.usage === null ? 0 : r.usage.input + r.usage.output),
      0,
    );
    const cost = group.rows.reduce((sum, r) => sum + (r.usage?.costUsd ?? 0), 0);
    const state = raceState(group);
    const fresh = h(
      "tr",
      { class: "race-row", "data-race": group.key, "data-state": state },
      h(
        "td",
        { class: "name" },
        h(
          "button",
          { type: "button", class: "race-toggle", "aria-expanded": open ? "true" : "false" },
          open ? "▾ " : "▸ ",
          group.name,
        ),
      ),
      h("td", null, [...new Set(group.rows.map((r) => r.backend ?? "?"))].join(", ")),
      h(
        "td",
        null,
        h("span", { class: `pill st-${state === "racing" ? "running" : "recorded"}` }, `race: ${state}`),
      ),
      h(
        "td",
        { class: "age", "data-since": first?.admittedAt ?? "" },
        since(first?.admittedAt ?? null, this.now()),
      ),
      h("td", { class: "doing" }, raceWords(group)),
      h("td", null, tokens === 0 ? "–" : count(tokens)),
      h("td", null, usd(cost > 0 ? cost : null)),
      h("td", null),
    );
    const drawn = this.raceTrs.get(group.key);
    if (drawn !== undefined) {
      morphElement(drawn, fresh);
      return drawn;
    }
    this.raceTrs.set(group.key, fresh);
    return fresh;
  }

  /**
   * A click on a race's button opens or closes it. Listened for on the table's body: a race's line is
   * drawn again as its attempts move, and a changed cell is a new element, without a listener of its own.
   */
  private toggleRaceOn(event: Event): void {
    const target = event.target instanceof Element ? event.target : null;
    const key = target?.closest("button.race-toggle")?.closest("tr.race-row")?.getAttribute("data-race");
    if (key == null) return;
    if (this.openRaces.has(key)) this.openRaces.delete(key);
    else this.openRaces.add(key);
    this.drawRows([]);
  }

  private drawTimeline(): void {
    if (this.timelineBox === null) return;
    replace(
      this.timelineBox,
      renderTimeline([...this.bars.values()], this.now(), (id) =>
        go(`/runs/${encodeURIComponent(this.run)}/dispatches/${encodeURIComponent(id)}`),
      ),
    );
  }

  private tr(r: RowWire): HTMLTableRowElement {
    const now = this.now();
    const live = r.state !== "recorded";
    const cancelButton = live
      ? h("button", { class: "danger cancel", type: "button", "data-id": r.dispatchId }, "Cancel")
      : null;
    cancelButton?.addEventListener("click", () => {
      void confirmCancel(r.name).then(async (yes) => {
        if (yes) toast(`${r.name}: ${await cancel(this.run, r.dispatchId)}`);
      });
    });
    const stateClass = r.status !== null ? `s-${r.status}` : `st-${r.state}`;
    return h(
      "tr",
      {
        class: `dispatch-row${r.unread ? " unread" : ""}${r.race == null ? "" : " race-attempt"}`,
        "data-id": r.dispatchId,
        "data-state": r.state,
      },
      h(
        "td",
        { class: "name" },
        link(`/runs/${encodeURIComponent(this.run)}/dispatches/${encodeURIComponent(r.dispatchId)}`, r.name),
      ),
      h("td", null, chainText(r)),
      h(
        "td",
        null,
        h(
          "span",
          { class: `pill ${stateClass}` },
          r.state === "recorded" ? (r.status ?? "recorded") : r.state,
        ),
      ),
      h(
        "td",
        { class: "age", "data-since": r.admittedAt ?? r.startedAt ?? "" },
        since(r.admittedAt ?? r.startedAt, now),
      ),
      h("td", { class: "doing" }, doing(r, now)),
      h("td", null, r.usage === null ? "–" : tokensText(r)),
      h("td", null, usd(r.usage?.costUsd ?? null)),
      h("td", null, cancelButton),
    );
  }

  private tick(): void {
    const now = this.now();
    for (const el of this.root?.querySelectorAll<HTMLElement>("td.age[data-since]") ?? []) {
      const t = el.dataset.since ?? "";
      if (t !== "") el.textContent = since(t, now);
    }
    for (const el of this.root?.querySelectorAll<HTMLElement>("[data-open-since]") ?? []) {
      el.textContent = since(el.dataset.openSince ?? null, now);
    }
  }

  stop(): void {
    this.root = null;
    if (this.ticker !== null) clearInterval(this.ticker);
    if (this.redraw !== null) clearTimeout(this.redraw);
  }
}

/** Live first (queued after the running), then newest first. */
function order(a: RowWire, b: RowWire): number {
  const rank = (r: RowWire) => (r.state === "recorded" ? 2 : r.state === "queued" ? 1 : 0);
  return rank(a) - rank(b) || (a.dispatchId < b.dispatchId ? 1 : a.dispatchId > b.dispatchId ? -1 : 0);
}

/** "codex rate-limit → claude-code", the chain of a row; its own backend alone for a dispatch of one. */
export function chainText(r: RowWire): string {
  const earlier = r.earlier.map((e) => `${e.backend ?? "?"} ${e.kind ?? e.status ?? "?"}`);
  const next = r.next === null ? [] : [`${r.next.backend} next`];
  return [...earlier, r.backend ?? "?", ...next].join(" → ");
}

function tokensText(r: RowWire): string {
  const u = r.usage;
  if (u === null) return "–";
  const used = count(u.input + u.output);
  return u.caps.tokens === undefined ? used : `${used}/${count(u.caps.tokens)}`;
}

/** What a live dispatch is doing now, or how a recorded one ended. */
function doing(r: RowWire, now: number): Node | string {
  if (r.problems.length > 0) return `! ${r.problems[0]?.code}: ${r.problems[0]?.message}`;
  if (r.state === "recorded") {
    const verdict =
      r.error !== null
        ? `${r.error.kind ?? r.status}: ${r.error.message}`
        : `${r.status ?? "?"} (${r.reason ?? "?"})`;
    const refused = sandboxWords(r);
    const tail = [
      ...(r.check?.passed === true ? [h("span", { class: "check" }, " · check passed")] : []),
      ...(refused === null ? [] : [h("span", { class: "warn sandbox" }, ` · ${refused}`)]),
    ];
    if (r.outcome === undefined) return tail.length === 0 ? verdict : h("span", null, verdict, ...tail);
    return h(
      "span",
      null,
      verdict,
      h("span", { class: "outcome" }, ` · ${outcomeWords(r.outcome, ": ")}`),
      ...tail,
    );
  }
  if (r.queue !== null) return r.queue.blocker;
  if (r.state === "verifying") return checkingWords(r, now);
  // Waiting for an answer: what someone must do something about, first.
  const asking = askingWords(r);
  if (asking !== null) return h("span", { class: "warn asking" }, asking);
  const parts: (Node | string)[] = [];
  const open = r.openToolCalls[0];
  if (open !== undefined) {
    parts.push(
      h("span", { class: "tool" }, open.label),
      " for ",
      h("span", { "data-open-since": open.openedAt }, since(open.openedAt, now)),
    );
  } else if (r.lastEvent !== null) parts.push(r.lastEvent);
  else parts.push(r.state);
  if (open === undefined && r.lastEventAt !== null) {
    const quiet = now - Date.parse(r.lastEventAt);
    if (quiet > 30_000) parts.push(h("span", { class: "dim" }, ` · idle ${duration(quiet)}`));
  }
  if (r.retrying > 0) parts.push(h("span", { class: "warn" }, ` · provider retry ${r.retrying}`));
  else if (r.retries > 0) parts.push(h("span", { class: "dim" }, ` · ${r.retries} retries`));
  const refused = sandboxWords(r);
  if (refused !== null) parts.push(h("span", { class: "warn sandbox" }, ` · ${refused}`));
  return h("span", null, ...parts);
}

/** A dispatch whose check runs: "checking npm test for 12s" (waiting for its slot: "checking npm test"). */
function checkingWords(r: RowWire, now: number): Node | string {
  const check = r.check ?? null;
  if (check === null) return "checking";
  const command = check.command.split("\n")[0] ?? "";
  if (check.since === null) return h("span", null, "checking ", h("span", { class: "tool" }, command));
  return h(
    "span",
    null,
    "checking ",
    h("span", { class: "tool" }, command),
    " for ",
    h("span", { "data-open-since": check.since }, since(check.since, now)),
  );
}

/**
 * The worker's declared outcome (`--outcome`) in words, beside catherd's verdict: "blocked: no key";
 * "no outcome" when it was asked for and the final message had no STATUS line.
 */
export function outcomeWords(outcome: RowWire["outcome"], separator: string): string {
  if (outcome == null) return "no outcome";
  return outcome.why === "" ? outcome.status : `${outcome.status}${separator}${outcome.why}`;
}
