import { backendFor } from "../backends/registry.js";
import { overview } from "../dispatch/overview.js";
import { cleanableBytes } from "../dispatch/read/cleanable.js";
import type { DispatchRow } from "../dispatch/read/rows.js";
import { CLEANABLE_NOTE_BYTES, DEFAULT_CLEAN_AGE, DEFAULT_CLEAN_AGE_MS } from "../domain/clean.js";
import type { DispatchState, Status } from "../domain/vocab.js";
import { systemClock } from "../infra/clock.js";
import { type Command, RUN_OPTION } from "./kit.js";
import { age, bytes, cell, count, paint, type Style, shortWhy, WIDTH } from "./render.js";
import { runPathsOf } from "./resolve.js";

const RECENT_MS = 24 * 3_600_000;

/** Kinds that name how catherd ended a dispatch: its status and exit reason tell them better. */
const CATHERD_KINDS: ReadonlySet<string> = new Set(["timeout", "cancelled", "lost"]);

const STATE_STYLE: Partial<Record<DispatchState, Style>> = {
  queued: "dim",
  running: "cyan",
  starting: "cyan",
  stopping: "yellow",
  orphaned: "red",
  lost: "red",
};
const STATUS_STYLE: Partial<Record<Status, Style>> = {
  ok: "green",
  failed: "red",
  lost: "red",
  limit: "yellow",
  timeout: "yellow",
};

export const statusCommand: Command<{ dispatches: DispatchRow[]; cleanableBytes: number }> = {
  name: "status",
  synopsis: "",
  summary:
    "One row per dispatch of the run, live ones first. Without --all, recorded dispatches older than a day " +
    "are left out unless their result is unread. A '*' marks a result not yet read with 'catherd result'. " +
    `A run whose dispatches recorded more than ${DEFAULT_CLEAN_AGE} ago hold over 1 GiB gets a line saying so.`,
  json: "{dispatches: [a row per dispatch], cleanableBytes}",
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
    const cleanable = cleanableBytes(all, now, DEFAULT_CLEAN_AGE_MS);
    return {
      data: { dispatches: shown, cleanableBytes: cleanable },
      text: renderStatus(shown, run.run, all.length - shown.length, now) + cleanableNote(run.run, cleanable),
    };
  },
};

/**
 * The 80-column table. Columns: name, id suffix, backend, state (always a state: `recorded` once there is
 * a record), age, tokens, and the last: what a live dispatch is doing, or the result of a recorded one —
 * its status and exit reason, as `result` prints them.
 */
export function renderStatus(rows: DispatchRow[], run: string, hidden: number, now: number): string {
  if (rows.length === 0) {
    return `no dispatches in run ${run}${hidden > 0 ? ` (${hidden} older: catherd status --all)` : ""}\n`;
  }
  const header = `  ${cell("NAME", 14)} ${cell("ID", 6)} ${cell("BACKEND", 8)} ${cell("STATE", 9)} ${cell("AGE", 6)} ${cell("TOKENS", 6)} DOING / RESULT`;
  const lines = [paint(header.trimEnd(), "dim")];
  const restWidth = WIDTH - (2 + 14 + 6 + 8 + 9 + 6 + 6) - 6;
  for (const r of rows) {
    const mark = r.unread ? "* " : "  ";
    const stateStyle = STATE_STYLE[r.state];
    const tokens = r.tokens === null ? "-" : count(r.tokens.input + r.tokens.output);
    const last = chainText(r, doingOrResult(r, now));
    const lastStyle = last.status === null ? undefined : STATUS_STYLE[last.status];
    const line = [
      mark + cell(r.name ?? "(by hand)", 14),
      cell(r.dispatchId.slice(-6), 6),
      cell(r.backend === null ? "?" : backendFor(r.backend).label, 8),
      stateStyle === undefined ? cell(r.state, 9) : paint(cell(r.state, 9), stateStyle),
      cell(age(r.admittedAt ?? r.startedAt, now), 6),
      cell(tokens, 6),
      lastStyle === undefined ? cell(last.text, restWidth) : paint(cell(last.text, restWidth), lastStyle),
    ]
      .join(" ")
      .trimEnd();
    lines.push(r.unread ? paint(line, "bold") : line);
  }
  if (hidden > 0) lines.push(paint(`(${hidden} older recorded: catherd status --all)`, "dim"));
  return `${lines.join("\n")}\n`;
}

/**
 * A chain's row says how its earlier attempts ended and where it goes next:
 * "codex quota → claude-code rate-limit → claude-code running: …", "codex quota → claude-code next".
 */
function chainText(
  r: DispatchRow,
  last: { text: string; status: DispatchRow["status"] },
): { text: string; status: DispatchRow["status"] } {
  const label = (backend: DispatchRow["backend"]) => (backend === null ? "?" : backendFor(backend).label);
  const earlier = r.earlier.map((e) => `${label(e.backend)} ${e.kind ?? e.status ?? "?"}`);
  const own = r.earlier.length === 0 ? last.text : `${label(r.backend)} ${last.text}`;
  const next = r.next === null ? [] : [`${label(r.next.backend)} next`];
  if (earlier.length === 0 && next.length === 0) return last;
  return { text: [...earlier, own, ...next].join(" → "), status: last.status };
}

/** "#2 capacity (cap 3)", "#1 overlap: src/ (fix-tests)", "#1 not before 14:05", "slurm Licenses (job 12)". */
export function queuedText(q: NonNullable<DispatchRow["queue"]>): string {
  if (q.engine !== undefined) return `queued: ${q.engine.name} ${q.engine.reason} (job ${q.engine.jobId})`;
  const place = q.position === null ? "next" : `#${q.position}`;
  const b = q.blocker;
  const why =
    q.blockedBy === "overlap"
      ? `overlap: ${b?.owns ?? "?"} (${b?.name ?? "?"})`
      : q.blockedBy === "backend-cap"
        ? `${b?.backend ?? "?"} cap ${b?.cap ?? "?"}`
        : q.blockedBy === "capacity"
          ? `capacity (cap ${b?.cap ?? "?"})`
          : `not before ${q.notBefore?.slice(11, 19) ?? "?"}`;
  return `queued ${place}: ${why}`;
}

/**
 * The last column: a problem, the result of a recorded dispatch, or what a live one is doing. A result
 * that a provider or the CLI explained says why, in the colour of its status ("auth: invalid x-api-key",
 * "rate-limit, retry 14:05"); any other says its status and exit reason.
 */
function doingOrResult(r: DispatchRow, now: number): { text: string; status: DispatchRow["status"] } {
  if (r.problems.length > 0)
    return { text: `! ${r.problems[0]?.code}: ${r.problems[0]?.message}`, status: null };
  if (r.undecided !== null) return { text: `? ${r.undecided}`, status: null };
  if (r.state === "recorded" && r.status !== null) {
    if (r.error !== null && !CATHERD_KINDS.has(r.error.kind ?? "") && r.error.kind !== null)
      return { text: shortWhy(r.error, now), status: r.status };
    return { text: `${r.status} (${r.reason ?? "?"})`, status: r.status };
  }
  // Ended (exit.json written) but not yet recorded: the reason is known, the status not yet.
  if (r.state === "recorded" || r.state === "exited") return { text: r.reason ?? "", status: null };
  if (r.queue !== null) return { text: queuedText(r.queue), status: null };
  const open = r.openToolCalls[0];
  if (open !== undefined) {
    return { text: `tool open ${age(open.openedAt, now)}: ${open.label.replace(/^\$ /, "")}`, status: null };
  }
  return { text: r.lastEvent ?? (r.state === "starting" ? "starting" : ""), status: null };
}

/** One line when the run's old records hold more than CLEANABLE_NOTE_BYTES that `clean` could free. */
export function cleanableNote(run: string, cleanable: number): string {
  if (cleanable <= CLEANABLE_NOTE_BYTES) return "";
  return `${paint(`run ${run}: ${bytes(cleanable)} in dispatches recorded over ${DEFAULT_CLEAN_AGE} ago; free it with catherd clean --run ${run} (--dry-run first)`, "yellow")}\n`;
}
