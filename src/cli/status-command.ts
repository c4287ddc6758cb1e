import * as path from "node:path";
import { type RunBudgetView, runBudgetView } from "../dispatch/read/budget-left.js";
import { cleanableBytes } from "../dispatch/read/cleanable.js";
import { lockActivityCell } from "../dispatch/read/lock-activity.js";
import { queuedText } from "../dispatch/read/queue-text.js";
import type { DispatchRow } from "../dispatch/read/rows.js";
import { overview } from "../dispatch/status.js";
import { CLEANABLE_NOTE_BYTES, DEFAULT_CLEAN_AGE, DEFAULT_CLEAN_AGE_MS } from "../domain/clean-rule.js";
import type { DeclaredOutcome } from "../domain/ending/declared-outcome.js";
import { statusWords } from "../domain/ending/record-words.js";
import type { DispatchState, Status } from "../domain/vocab.js";
import { readRunFile } from "../folder/run-file.js";
import { systemClock } from "../infra/clock.js";
import { type Command, RUN_OPTION } from "./command-io.js";
import { age, askingText, bytes, cell, paint, type Style, shortWhy, tableWidth, WIDTH } from "./render.js";
import { runPathsOf } from "./resolve.js";
import { budgetLine, costCell, tokensCell } from "./spend-text.js";

const RECENT_MS = 24 * 3_600_000;

/** Kinds that name how catherd ended a dispatch: its status and exit reason tell them better. */
const CATHERD_KINDS: ReadonlySet<string> = new Set(["timeout", "cancelled", "lost"]);

/** The STATE column: the longest state's name ("verifying"). */
const STATE_WIDTH = 9;

const STATE_STYLE: Partial<Record<DispatchState, Style>> = {
  queued: "dim",
  running: "cyan",
  starting: "cyan",
  stopping: "yellow",
  verifying: "cyan",
  orphaned: "red",
  lost: "red",
  unknown: "red",
};
const STATUS_STYLE: Partial<Record<Status, Style>> = {
  ok: "green",
  failed: "red",
  lost: "red",
  limit: "yellow",
  timeout: "yellow",
};

/** A row of `status` (its conversation's fields: rows.ts, RowConversation). */
export type StatusRow = DispatchRow;

/** What `status --json` prints. */
export interface StatusData {
  dispatches: StatusRow[];
  cleanableBytes: number;
  /** The run's --run-budget and its spend so far; null when the run has no budget. */
  runBudget: RunBudgetView | null;
}

export const statusCommand: Command<StatusData> = {
  name: "status",
  synopsis: "",
  positionals: 0,
  summary:
    "One row per dispatch of the run, live ones first. Without --all, recorded dispatches older than a day " +
    "are left out unless their result is unread. A '*' marks a result not yet read with 'catherd result'. " +
    `A run whose dispatches recorded more than ${DEFAULT_CLEAN_AGE} ago hold over 1 GiB gets a line saying so. ` +
    "TOKENS and COST are each dispatch's spend, against its --max-tokens and --max-cost when it has them; " +
    "a run with a --run-budget gets a first line with its spend against it.",
  json: "{dispatches: [a row per dispatch], cleanableBytes, runBudget: {budget, spend, elapsedMs, spent, problems} | null}",
  options: {
    run: RUN_OPTION,
    all: { type: "boolean", description: "also records older than a day that were read" },
  },
  async handler(input) {
    const run = runPathsOf(input);
    const all = await overview(run);
    const now = systemClock.wallNow().getTime();
    const shown =
      input.values.all === true
        ? all
        : all.filter(
            (r) => r.state !== "recorded" || r.unread || now - Date.parse(r.endedAt ?? "") < RECENT_MS,
          );
    const rows = shown;
    const cleanable = cleanableBytes(all, now, DEFAULT_CLEAN_AGE_MS);
    const view = await runBudgetView(run, readRunFile(run), now);
    const budget = view === null ? null : withLiveRows(view, all.filter(spendsNow).length);
    return {
      data: { dispatches: rows, cleanableBytes: cleanable, runBudget: budget },
      text:
        budgetText(budget, run.run) +
        renderStatus(rows, { run: run.run, hidden: all.length - shown.length, now, width: tableWidth() }) +
        cleanableNote(run.run, cleanable),
    };
  },
};

/**
 * The run's budget as status shows it, in its line and its JSON alike: its live dispatches are its rows,
 * not its ledger's live parts — a dispatch that has written no part yet (every one, until the run has a
 * budget and its supervisor's next look) is live all the same.
 */
function withLiveRows(view: RunBudgetView, live: number): RunBudgetView {
  return { ...view, spend: { ...view.spend, live } };
}

function budgetText(view: RunBudgetView | null, run: string): string {
  if (view === null) return "";
  return paint(budgetLine(view, run), view.spent === null ? "dim" : "yellow");
}

/** The states of a dispatch that may be spending now: from its start to its record. Queued spends nothing. */
const SPENDING_STATES: ReadonlySet<DispatchState> = new Set([
  "starting",
  "running",
  "stopping",
  "exited",
  "orphaned",
]);

function spendsNow(row: DispatchRow): boolean {
  return SPENDING_STATES.has(row.state);
}

/** What the table says around its rows: the run, how many rows it left out, the time, its width. */
export interface StatusTable {
  run: string;
  /** Recorded dispatches left out (older than a day and read): a line says how to see them. */
  hidden: number;
  now: number;
  /** Columns to fill (default WIDTH). */
  width?: number;
}

/** The widths of the table's columns for these rows; `cost` 0 when the COST column is left out. */
interface Columns {
  name: number;
  backend: number;
  tokens: number;
  cost: number;
  rest: number;
}

/**
 * The table, as wide as the terminal when stdout is one (80 columns otherwise). Columns: name, id suffix,
 * backend, state (always a state: `recorded` once there is a record), age, tokens and cost (each against
 * its cap: "41k/50k"), and the last: what a
 * live dispatch is doing, or the result of a recorded one — its most useful words first, since a narrow
 * terminal cuts the end; a declared outcome (`--outcome`) follows catherd's verdict: "ok · blocked: no key".
 */
export function renderStatus(rows: DispatchRow[], { run, hidden, now, width = WIDTH }: StatusTable): string {
  if (rows.length === 0) {
    return `no dispatches in run ${run}${hidden > 0 ? ` (${hidden} older: catherd status --all)` : ""}\n`;
  }
  const columns = columnsOf(rows, width);
  const lines = [paint(headerLine(columns), "dim"), ...rows.map((r) => rowLine(r, columns, now))];
  if (hidden > 0) lines.push(paint(`(${hidden} older recorded: catherd status --all)`, "dim"));
  return `${lines.join("\n")}\n`;
}

/** Names and backends as wide as the longest shown (within bounds): what is left is the last column's. */
function columnsOf(rows: readonly DispatchRow[], width: number): Columns {
  const name = Math.min(14, Math.max(4, ...rows.map((r) => (r.name ?? "(by hand)").length)));
  const backend = Math.max(7, ...rows.map((r) => (r.backend ?? "?").length));
  const tokens = Math.min(13, Math.max(6, ...rows.map((r) => tokensCell(r.spend).length)));
  // COST only when some row has a figure or a cap: most CLIs give none, and the last column gets the room.
  const costs = rows.map((r) => costCell(r.spend));
  const cost = costs.every((c) => c === "-" || c === "?")
    ? 0
    : Math.min(15, Math.max(5, ...costs.map((c) => c.length)));
  const rest = Math.max(
    12,
    width - (2 + name + 6 + backend + STATE_WIDTH + 6 + tokens + cost) - (cost === 0 ? 6 : 7),
  );
  return { name, backend, tokens, cost, rest };
}

function headerLine(c: Columns): string {
  const cost = c.cost === 0 ? "" : `${cell("COST", c.cost)} `;
  return `  ${cell("NAME", c.name)} ${cell("ID", 6)} ${cell("BACKEND", c.backend)} ${cell("STATE", STATE_WIDTH)} ${cell("AGE", 6)} ${cell("TOKENS", c.tokens)} ${cost}DOING / RESULT`.trimEnd();
}

/** One dispatch's row: a '*' and bold when its result is unread; its state and its last column coloured. */
function rowLine(r: DispatchRow, c: Columns, now: number): string {
  const stateStyle = STATE_STYLE[r.state];
  const last = chainText(r, doingOrResult(r, now));
  const lastStyle: Style | undefined =
    r.asking != null && r.state !== "recorded"
      ? "yellow"
      : last.status === null
        ? undefined
        : STATUS_STYLE[last.status];
  const line = [
    (r.unread ? "* " : "  ") + cell(r.name ?? "(by hand)", c.name),
    cell(r.dispatchId.slice(-6), 6),
    cell(r.backend ?? "?", c.backend),
    stateStyle === undefined ? cell(r.state, STATE_WIDTH) : paint(cell(r.state, STATE_WIDTH), stateStyle),
    cell(age(r.admittedAt ?? r.startedAt, now), 6),
    cell(tokensCell(r.spend), c.tokens),
    ...(c.cost === 0 ? [] : [cell(costCell(r.spend), c.cost)]),
    lastStyle === undefined ? cell(last.text, c.rest) : paint(cell(last.text, c.rest), lastStyle),
  ]
    .join(" ")
    .trimEnd();
  return r.unread ? paint(line, "bold") : line;
}

/**
 * A chain's row says its own attempt first, then where it goes next and how the attempts before it ended,
 * the latest first: "tool open 12s: npm test ← codex rate-limit", "rate-limit, retry 14:05 → claude-code
 * next ← codex quota".
 */
function chainText(
  r: DispatchRow,
  last: { text: string; status: DispatchRow["status"] },
): { text: string; status: DispatchRow["status"] } {
  const next = r.next === null ? "" : ` → ${r.next.backend} next`;
  const earlier = [...r.earlier].reverse().map((e) => ` ← ${e.backend ?? "?"} ${e.kind ?? e.status ?? "?"}`);
  return { text: `${last.text}${next}${earlier.join("")}`, status: last.status };
}

/** What is wrong with the folder's files, its state first: "cannot read admit.json (state unknown)". */
function problemText(r: DispatchRow): string {
  const name = (p: DispatchRow["problems"][number]) => (p.file === null ? p.code : path.basename(p.file));
  const unreadable = r.problems.filter((p) => p.code === "E_IO_READ").map(name);
  if (r.state === "unknown") return `cannot read ${unreadable.join(", ")} (state unknown)`;
  const first = r.problems[0];
  if (first === undefined) return "";
  const what =
    first.code === "E_FILE_CORRUPT" || first.code === "E_SPEC_INVALID"
      ? "is torn or invalid"
      : first.code === "E_SCHEMA_NEWER"
        ? "is from a newer catherd"
        : "cannot be read";
  return `! ${name(first)} ${what} (${first.code})`;
}

/**
 * The last column: a problem, the result of a recorded dispatch, or what a live one is doing. A result
 * that a provider or the CLI explained says why, in the colour of its status ("auth: invalid x-api-key",
 * "rate-limit, retry 14:05"); any other says its status, and its exit reason where that adds something.
 */
function doingOrResult(r: DispatchRow, now: number): { text: string; status: DispatchRow["status"] } {
  if (r.problems.length > 0) return { text: problemText(r), status: null };
  if (r.undecided !== null) return { text: `? ${r.undecided}`, status: null };
  // A question nobody answered: the agent waits for it, and that is what someone must do something about.
  if (r.asking != null && r.state !== "recorded") {
    return { text: askingText(r.asking, (r.questions ?? 1) - 1), status: null };
  }
  if (r.state === "recorded" && r.status !== null) {
    const declared = r.outcome === undefined ? "" : ` · ${outcomeCell(r.outcome)}`;
    if (r.error !== null && !CATHERD_KINDS.has(r.error.kind ?? "") && r.error.kind !== null)
      return { text: `${shortWhy(r.error, now)}${declared}`, status: r.status };
    const checked = r.check?.passed === true ? " · check passed" : "";
    return { text: `${statusWords(r.status, r.reason)}${checked}${declared}`, status: r.status };
  }
  if (r.state === "verifying") return { text: checkingText(r.check, now), status: null };
  // Ended (exit.json written) but not yet recorded: the reason is known, the status not yet.
  if (r.state === "recorded" || r.state === "exited") return { text: r.reason ?? "", status: null };
  if (r.queue !== null) return { text: queuedText(r.queue), status: null };
  if (r.heavy !== null) return { text: lockActivityCell(r.heavy, now), status: null };
  const open = r.openToolCalls[0];
  if (open !== undefined) {
    return { text: `tool open ${age(open.openedAt, now)}: ${open.label.replace(/^\$ /, "")}`, status: null };
  }
  return { text: r.lastEvent ?? (r.state === "starting" ? "starting" : ""), status: null };
}

/** A dispatch whose check runs: "checking 12s: npm test" (or waits for its slot: "checking: npm test"). */
function checkingText(check: DispatchRow["check"], now: number): string {
  if (check === undefined) return "checking";
  const command = check.command.split("\n")[0] ?? "";
  return check.since === null ? `checking: ${command}` : `checking ${age(check.since, now)}: ${command}`;
}

/**
 * The worker's declared outcome after catherd's verdict, as the last column has room for: "blocked: no
 * key"; "no outcome" when it was asked for and the final message had no line.
 */
function outcomeCell(outcome: DeclaredOutcome | null): string {
  if (outcome === null) return "no outcome";
  return outcome.why === "" ? outcome.status : `${outcome.status}: ${outcome.why}`;
}

/** One line when the run's old records hold more than CLEANABLE_NOTE_BYTES that `clean` could free. */
export function cleanableNote(run: string, cleanable: number): string {
  if (cleanable <= CLEANABLE_NOTE_BYTES) return "";
  return `${paint(`run ${run}: ${bytes(cleanable)} in dispatches recorded over ${DEFAULT_CLEAN_AGE} ago; free it with catherd clean --run ${run} (--dry-run first)`, "yellow")}\n`;
}
