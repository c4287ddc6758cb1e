import { backendFor } from "../backends/registry.js";
import { type DispatchRow, overview } from "../dispatch/overview.js";
import { catherdHome, runName, runPaths } from "../infra/paths.js";
import { type Command, stringOption } from "./kit.js";
import { age, cell, count, paint, type Style, shortWhy, WIDTH } from "./render.js";

const RECENT_MS = 24 * 3_600_000;

/** Kinds that name how catherd ended a run: the exit reason tells them better than the kind. */
const CATHERD_KINDS: ReadonlySet<string> = new Set(["timeout", "cancelled", "lost"]);

const STATE_STYLE: Partial<Record<string, Style>> = {
  running: "cyan",
  starting: "cyan",
  stopping: "yellow",
  orphaned: "red",
  lost: "red",
};
const STATUS_STYLE: Partial<Record<string, Style>> = {
  ok: "green",
  failed: "red",
  lost: "red",
  limit: "yellow",
  timeout: "yellow",
};

export const statusCommand: Command<{ dispatches: DispatchRow[] }> = {
  name: "status",
  usage: `usage: catherd status [--run <r>] [--all] [--json]

One row per dispatch of the run, live ones first. Without --all, recorded dispatches older than a day
are left out unless their result is unread. A '*' marks a result not yet read with 'catherd result'.`,
  options: { run: { type: "string" }, all: { type: "boolean" } },
  async run(input) {
    const run = runPaths(catherdHome(), runName(stringOption(input, "run")));
    const all = await overview(run);
    const now = Date.now();
    const shown =
      input.values.all === true
        ? all
        : all.filter(
            (r) => r.state !== "recorded" || r.unread || now - Date.parse(r.endedAt ?? "") < RECENT_MS,
          );
    return {
      data: { dispatches: shown },
      text: renderStatus(shown, run.run, all.length - shown.length, now),
    };
  },
};

/** The 80-column table. Columns: name, id suffix, backend, state, age, tokens, what it is doing. */
export function renderStatus(rows: DispatchRow[], run: string, hidden: number, now = Date.now()): string {
  if (rows.length === 0) {
    return `no dispatches in run ${run}${hidden > 0 ? ` (${hidden} older: catherd status --all)` : ""}\n`;
  }
  const header = `  ${cell("NAME", 14)} ${cell("ID", 6)} ${cell("BACKEND", 8)} ${cell("STATE", 9)} ${cell("AGE", 6)} ${cell("TOKENS", 6)} DOING / RESULT`;
  const lines = [paint(header.trimEnd(), "dim")];
  const restWidth = WIDTH - (2 + 14 + 6 + 8 + 9 + 6 + 6) - 6;
  for (const r of rows) {
    const mark = r.unread ? "* " : "  ";
    const state = r.state === "recorded" ? (r.status ?? "recorded") : r.state;
    const style = r.state === "recorded" ? STATUS_STYLE[state] : STATE_STYLE[state];
    const tokens = r.tokens === null ? "-" : count(r.tokens.input + r.tokens.output);
    const line = [
      mark + cell(r.name ?? "(by hand)", 14),
      cell(r.dispatchId.slice(-6), 6),
      cell(r.backend === null ? "?" : backendFor(r.backend).label, 8),
      style === undefined ? cell(state, 9) : paint(cell(state, 9), style),
      cell(age(r.admittedAt, now), 6),
      cell(tokens, 6),
      cell(doing(r, now), restWidth),
    ]
      .join(" ")
      .trimEnd();
    lines.push(r.unread ? paint(line, "bold") : line);
  }
  if (hidden > 0) lines.push(paint(`(${hidden} older recorded: catherd status --all)`, "dim"));
  return `${lines.join("\n")}\n`;
}

function doing(r: DispatchRow, now: number): string {
  if (r.problems.length > 0) return `! ${r.problems[0]?.code}: ${r.problems[0]?.message}`;
  // A provider's or a CLI's failure says why; catherd's own ends (timeout, cancel, lost) say how.
  if (r.state === "recorded" && r.error !== null && !CATHERD_KINDS.has(r.error.kind ?? ""))
    return shortWhy(r.error, now);
  if (r.state === "recorded" || r.state === "exited") return r.reason ?? "";
  const open = r.openToolCalls[0];
  if (open !== undefined) return `tool open ${age(open.openedAt, now)}: ${open.label.replace(/^\$ /, "")}`;
  return r.lastEvent ?? (r.state === "starting" ? "starting" : "");
}
