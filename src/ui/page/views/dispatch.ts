import type {
  DispatchWire,
  MessageWire,
  PushWire,
  QuestionWire,
  UsagePointWire,
  UsageWire,
} from "../../wire.js";
import { cancel, confirmCancel, getJson, notifyButton, notifyEnded, toast, type View } from "../app.js";
import { answerWords, messageWords } from "../conversation.js";
import { parsePatch } from "../diff.js";
import { h, link, replace, svg } from "../dom.js";
import { clock, count, duration, usd } from "../format.js";
import { parseMarkdown } from "../markdown.js";
import { renderMarkdown } from "../markdown-dom.js";
import { chainText, outcomeWords } from "./run.js";

// A dispatch: the brief, its events as human lines, tool calls with their durations, stalls and provider
// retries marked, the reply rendered from Markdown (safely: markdown.ts), changes.patch as a diff, the
// stderr tail, usage over time against its caps, and record.json, exit.json and spec.json. A push says the
// folder moved: the page is fetched again (at most a few times a second).

const REFETCH_MS = 300;

export class DispatchView implements View {
  readonly stream: { run: string; dispatch: string };
  private root: HTMLElement | null = null;
  private refetch: number | null = null;

  constructor(
    private readonly run: string,
    private readonly id: string,
  ) {
    this.stream = { run, dispatch: id };
  }

  async start(root: HTMLElement): Promise<void> {
    this.root = root;
    await this.load();
  }

  private async load(): Promise<void> {
    const data = await getJson<DispatchWire>(
      `/api/runs/${encodeURIComponent(this.run)}/dispatches/${encodeURIComponent(this.id)}`,
    );
    if (this.root === null) return;
    const events = this.root.querySelector(".events");
    const stick = events === null || events.scrollTop + events.clientHeight >= events.scrollHeight - 4;
    const scroll = window.scrollY;
    replace(this.root, ...this.sections(data));
    window.scrollTo(0, scroll);
    const list = this.root.querySelector(".events");
    if (list !== null && stick) list.scrollTop = list.scrollHeight;
  }

  push(push: PushWire): void {
    if (push.type === "ended" && push.run === this.run) {
      notifyEnded(push);
      toast(`${push.name}: ${push.status}`);
    }
    const mine =
      (push.type === "dispatch" && push.dispatchId === this.id) ||
      (push.type === "rows" && push.run === this.run && push.rows.some((r) => r.dispatchId === this.id));
    if (!mine || this.refetch !== null) return;
    this.refetch = window.setTimeout(() => {
      this.refetch = null;
      void this.load();
    }, REFETCH_MS);
  }

  stop(): void {
    this.root = null;
    if (this.refetch !== null) clearTimeout(this.refetch);
  }

  private sections(d: DispatchWire): Node[] {
    const r = d.row;
    const live = r.state !== "recorded";
    const cancelButton = live ? h("button", { class: "danger cancel", type: "button" }, "Cancel") : null;
    cancelButton?.addEventListener("click", () => {
      void confirmCancel(r.name).then(async (yes) => {
        if (yes) toast(`${r.name}: ${await cancel(this.run, r.dispatchId)}`);
      });
    });
    const state = r.state === "recorded" ? (r.status ?? "recorded") : r.state;
    return [
      h(
        "div",
        { class: "title-row" },
        h(
          "h2",
          null,
          r.name,
          " ",
          h("span", { class: `pill ${r.status !== null ? `s-${r.status}` : `st-${r.state}`}` }, state),
        ),
        h("div", null, notifyButton(), cancelButton),
      ),
      h(
        "p",
        { class: "summary" },
        `${r.dispatchId} · ${chainText(r)} · run `,
        link(`/runs/${encodeURIComponent(this.run)}`, this.run),
        r.reason === null ? "" : ` · ${r.reason}`,
        r.error === null ? "" : ` · ${r.error.kind ?? ""}: ${r.error.message}`,
      ),
      r.outcome === undefined
        ? null
        : h(
            "p",
            { class: "outcome" },
            r.outcome === null
              ? "Outcome: none — the final message carried no STATUS line (asked for with --outcome)"
              : `Outcome, the worker's word: ${outcomeWords(r.outcome, " — ")}`,
          ),
      d.attempts.length > 1
        ? h(
            "p",
            { class: "attempts" },
            "Attempts: ",
            ...d.attempts.flatMap((a, i) => [
              i > 0 ? " → " : "",
              link(
                `/runs/${encodeURIComponent(this.run)}/dispatches/${encodeURIComponent(a.dispatchId)}`,
                `${a.attempt}. ${a.backend ?? "?"} ${a.kind ?? a.status ?? "running"}`,
              ),
            ]),
          )
        : null,
      h("p", { class: "dim" }, "folder ", d.dir),
      section("Brief", d.brief === null ? empty("no brief") : h("pre", { class: "text brief" }, d.brief)),
      d.conversation == null
        ? null
        : section("Messages", messageTable(d.conversation.messages), questionTable(d.conversation.questions)),
      section(
        "Events",
        eventList(d),
        d.stall === null
          ? null
          : h("p", { class: "warn stall" }, `stalled: quiet ${duration(d.stall.quietMs)} at ${d.stall.at}`),
      ),
      section("Tool calls", toolTable(d)),
      section("Usage", usageBlock(r.usage, d.usageOverTime)),
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
    ].filter((n): n is HTMLElement => n !== null);
  }
}

function section(title: string, ...body: (Node | null)[]): HTMLElement {
  return h(
    "section",
    { class: `part part-${title.replace(/[^a-z]/gi, "").toLowerCase()}` },
    h("h3", null, title),
    ...body,
  );
}

function empty(text: string): HTMLElement {
  return h("p", { class: "empty" }, text);
}

function json(value: unknown): HTMLElement {
  return value === null || value === undefined
    ? empty("not written")
    : h("pre", { class: "text json" }, JSON.stringify(value, null, 2));
}

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

/** The messages sent to a steerable dispatch (`catherd send`): each with its state and when it got there. */
function messageTable(messages: MessageWire[]): HTMLElement {
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
function questionTable(questions: QuestionWire[]): HTMLElement {
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
          h("td", null, answerWords(q)),
          h("td", { class: "at" }, clock(Date.parse(q.askedAt))),
        ),
      ),
    ),
  );
}

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
      ...d.toolCalls.map((t) => {
        const took =
          t.openedAtMs === null
            ? "–"
            : t.closed
              ? t.closedAtMs === null
                ? "–"
                : duration(t.closedAtMs - t.openedAtMs)
              : `open ${duration(d.now - t.openedAtMs)}`;
        return h(
          "tr",
          { class: t.closed ? "closed" : "open" },
          h("td", { class: "tool" }, t.label),
          h("td", null, clock(t.openedAtMs)),
          h("td", null, took),
        );
      }),
    ),
  );
}

function usageBlock(u: UsageWire | null, points: UsagePointWire[]): HTMLElement {
  if (u === null) return empty("no usage reported");
  const caps = Object.entries(u.caps).map(([k, v]) => `${k} cap ${k === "usd" ? usd(v) : count(v)}`);
  const more = Object.entries(u.more).map(([k, v]) => `${k} ${count(v)}`);
  return h(
    "div",
    { class: "usage" },
    h(
      "p",
      null,
      `input ${count(u.input)} (cached ${count(u.cached)}), output ${count(u.output)}`,
      more.length > 0 ? `, ${more.join(", ")}` : "",
      ` · cost ${usd(u.costUsd)}${u.costSource === null ? "" : ` (${u.costSource})`}`,
      caps.length > 0 ? ` · ${caps.join(", ")}` : "",
    ),
    usageChart(points, u.caps.tokens ?? null),
  );
}

/** Tokens over time as a line, the token cap (if any) as a dashed line above it. */
function usageChart(points: UsagePointWire[], cap: number | null): Node | null {
  const dated = points.filter((p): p is UsagePointWire & { atMs: number } => p.atMs !== null);
  if (dated.length < 2) return null;
  const W = 600;
  const H = 120;
  const t0 = dated[0]?.atMs ?? 0;
  const t1 = Math.max(t0 + 1, dated.at(-1)?.atMs ?? 0);
  const top = Math.max(cap ?? 0, ...dated.map((p) => p.tokens), 1);
  const x = (t: number) => ((t - t0) / (t1 - t0)) * (W - 10) + 5;
  const y = (v: number) => H - 5 - (v / top) * (H - 20);
  const chart = svg(
    "svg",
    { class: "usage-chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "tokens over time" },
    svg("polyline", {
      class: "usage-line",
      points: dated.map((p) => `${x(p.atMs)},${y(p.tokens)}`).join(" "),
    }),
  );
  if (cap !== null) chart.append(svg("line", { class: "cap", x1: 0, x2: W, y1: y(cap), y2: y(cap) }));
  chart.append(svg("text", { class: "tick-label", x: 6, y: 12 }, `${count(top)} tokens`));
  return chart;
}

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
