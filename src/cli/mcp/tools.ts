import { z } from "zod";
import type { DispatchRow } from "../../dispatch/read/rows.js";
import type { RecordFile } from "../../domain/schemas.js";
import { type AnsweredData, answerCommand } from "../answer-command.js";
import { cancelCommand } from "../cancel-command.js";
import type { Command, ParsedInput } from "../command-io.js";
import { type Dispatched, dispatchCommand, INLINE_ANSWER_SCHEMA } from "../dispatch-command.js";
import { type DoctorData, doctorCommand } from "../doctor-command.js";
import { type Logs, logsCommand } from "../logs-command.js";
import { raceLine } from "../race-text.js";
import {
  type ConversationData,
  outcomeSuffix,
  type RaceResultData,
  recordLine,
  resultCommand,
} from "../result-command.js";
import { type Sent, sendCommand } from "../send-command.js";
import { type ShownDispatch, showCommand } from "../show-command.js";
import { statusCommand } from "../status-command.js";
import { type UsageReport, usageCommand } from "../usage-command.js";
import { attemptSuffix, type Waited, waitCommand } from "../wait-command.js";
import type { JsonSchema } from "./input.js";

// The MCP tools: one per verb of the command line, each calling that verb's command (src/cli/*-command.ts)
// with the ParsedInput its arguments stand for. The tool's structuredContent is the verb's --json output.

/** The default and the cap of `wait`'s timeoutS: under the tool-call ceilings of the clients (codex: 60 s). */
export const WAIT_DEFAULT_S = 50;
export const WAIT_MAX_S = 300;

/** An argument a tool adds to its command's flags. */
export interface ToolExtra {
  schema: JsonSchema;
  check: z.ZodTypeAny;
  apply(value: unknown, input: ParsedInput): void;
  /** Applied when the argument is not given. */
  fallback?: unknown;
}

/** One tool: its command, how its arguments map onto the command's input, and its one line of text. */
export interface ToolSpec<T = unknown> {
  name: string;
  title: string;
  description: string;
  command: Command<T>;
  /** The command's positionals, as one argument. */
  positionals?: { name: string; description: string; multiple?: boolean; required?: boolean };
  /** The command's arguments after `--`, as one argument. */
  rest?: { name: string; description: string };
  /** Flags not offered: each would block past any client's tool-call ceiling (wait is the tool for that). */
  omit?: readonly string[];
  extra?: Record<string, ToolExtra>;
  /**
   * For a tool that admits dispatches: the folders it made (a race's attempts, each). Such a call runs to
   * its end even when the client goes, and each record is notified to the client (the use case starts its
   * supervisor early).
   */
  madeDispatches?(data: T): string[];
  /** Reads only (MCP's readOnlyHint: codex runs such a tool without asking). */
  readOnly: boolean;
  /** One short line about the result, for clients that show text. */
  line(data: T): string;
}

const ref = (verb: string) => ({
  name: "name",
  description: `the dispatch to ${verb}: its name, its dispatch id, or its folder`,
  required: true,
});

const dispatchTool: ToolSpec<Dispatched> = {
  name: "dispatch",
  title: "Dispatch a brief to a coding agent",
  description:
    "Start a coding-agent CLI (codex, claude-code, opencode, gemini) on a brief, or any command (exec), under " +
    "catherd's detached supervisor. Returns at once with the dispatch's name and id; the work goes on " +
    "without this call, and its record is kept on disk. Collect it with wait, then result. " +
    "As `catherd dispatch`.",
  command: dispatchCommand,
  rest: {
    name: "args",
    description: "for exec: the command and its arguments; otherwise extra arguments for the CLI",
  },
  // The schema is given inline, as an object: a client has no file to name on the server's machine.
  omit: ["answer-schema"],
  extra: {
    answerSchema: {
      schema: {
        type: "object",
        description:
          "a JSON Schema (draft 2020-12; draft-07 or 2019-09 when its $schema names them), inline, that the agent's final answer must be valid against: result and wait then return the answer as `answer` (as --answer-schema)",
      },
      check: z.record(z.string(), z.unknown()),
      apply(value, input) {
        input.values[INLINE_ANSWER_SCHEMA] = JSON.stringify(value);
      },
    },
  },
  madeDispatches: ({ dispatched, race }) => race?.attempts.map((a) => a.dir) ?? [dispatched.dir],
  readOnly: false,
  line: ({ dispatched: d }) => `dispatched ${d.name} (${d.dispatchId}, ${d.backend})`,
};

const statusTool: ToolSpec<{ dispatches: DispatchRow[] }> = {
  name: "status",
  title: "Every dispatch of the run",
  description:
    "Every dispatch of the run, live ones first: its state, what it is doing (open tool call, last event), " +
    "tokens; for a finished one its status and reason, and whether its result was read. As `catherd status`.",
  command: statusCommand,
  readOnly: true,
  line: ({ dispatches }) => {
    if (dispatches.length === 0) return "no dispatches in the run";
    const counts = new Map<string, number>();
    for (const d of dispatches) {
      const key = d.state === "recorded" ? (d.status ?? "recorded") : d.state;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const parts = [...counts].map(([key, n]) => `${n} ${key}`);
    return `${dispatches.length} dispatches: ${parts.join(", ")}`;
  },
};

const showTool: ToolSpec<ShownDispatch> = {
  name: "show",
  title: "Everything about one dispatch",
  description:
    "Everything about one dispatch: admission, spec (secrets redacted), processes, exit, record, its last " +
    "events as human lines and its last stderr lines. As `catherd show`.",
  command: showCommand,
  positionals: ref("show"),
  readOnly: true,
  line: ({ dispatch: d }) =>
    `${d.admit?.name ?? "(by hand)"} ${d.dispatchId} ${d.state}${d.record === null ? "" : ` ${d.record.status} (${d.record.reason})${outcomeSuffix(d.record)}`}`,
};

const resultTool: ToolSpec<RecordFile | ConversationData | RaceResultData> = {
  name: "result",
  title: "The record and reply of a finished dispatch",
  description:
    "The record of a finished dispatch: status, reason, secs, tokens, error, changed files, the " +
    "worker's declared outcome (when dispatched with outcome), and the agent's reply. E_NOT_RECORDED while it still runs: call wait. " +
    "conversation: every turn of its conversation (dispatch followUp) instead. The name of a race " +
    "(dispatch attempts or also) gives `race`: a row per attempt and the winner, its branch and its patches. As `catherd result`.",
  command: resultCommand,
  positionals: ref("read"),
  // structuredContent is the record, whose `answer` is the answer (an MCP structuredContent is an object).
  omit: ["answer"],
  readOnly: true,
  line: (data) =>
    "race" in data
      ? raceLine(data.race)
      : "conversation" in data
        ? `${data.conversation.length} turns; newest ${data.conversation.at(-1)?.status ?? "live"}`
        : `${recordLine(data)}${outcomeSuffix(data)}: ${firstLine(data.reply) ?? "(no reply)"}`,
};

const logsTool: ToolSpec<Logs | null> = {
  name: "logs",
  title: "A dispatch's events as human lines",
  description:
    "A dispatch's event stream as human lines (raw: as the CLI wrote them). tail: only the last n lines; " +
    "since: only what came after the cursor a previous call returned. As `catherd logs`.",
  command: logsCommand,
  positionals: ref("read"),
  omit: ["follow"],
  readOnly: true,
  line: (logs) => (logs === null ? "" : `${logs.lines.length} lines; cursor ${logs.cursor}`),
};

const cancelTool: ToolSpec<{
  cancelled: { name: string | null; dispatchId: string; state: string; status: string | null };
}> = {
  name: "cancel",
  title: "Stop a dispatch",
  description:
    "Stop a dispatch: its supervisor stops the agent and everything it started, and records it cancelled. " +
    "Returns at once; wait returns the record. As `catherd cancel`.",
  command: cancelCommand,
  positionals: ref("cancel"),
  omit: ["wait"],
  readOnly: false,
  line: ({ cancelled: c }) =>
    c.status === null
      ? `${c.name ?? c.dispatchId}: cancel requested (${c.state})`
      : `${c.name ?? c.dispatchId}: recorded ${c.status}`,
};

const doctorTool: ToolSpec<DoctorData> = {
  name: "doctor",
  title: "Which agent CLIs can run here",
  description:
    "Which agent CLIs catherd can run on this machine: found or not and where, their versions, and the " +
    "fix for what is missing; with placement ssh:HOST, the same on HOST with each CLI's login there. As " +
    "`catherd doctor`.",
  command: doctorCommand,
  positionals: {
    name: "backends",
    description: "the backends to check (default: all)",
    multiple: true,
  },
  readOnly: true,
  line: (data) =>
    ("backends" in data ? data.backends : data.placement.backends)
      .map((b) => `${b.backend} ${b.found ? (b.version ?? "found") : "missing"}`)
      .join(", "),
};

const waitTool: ToolSpec<Waited> = {
  name: "wait",
  title: "Wait for dispatches to be recorded",
  description:
    `Wait up to timeoutS seconds (default ${WAIT_DEFAULT_S}, at most ${WAIT_MAX_S}) until the named ` +
    "dispatches (default: every live one of the run) are recorded, or with any the first of them. Returns " +
    "the records that are done and, for each one still running, what it is doing: state, its open tool " +
    "call and for how long, its spend so far (tokens, dollars and their source, against its caps). It never blocks past timeoutS: call it again to keep waiting; " +
    "nothing is lost between calls. The name of a race (dispatch attempts or also) waits until it is decided, and gives `race`. As `catherd wait`.",
  command: waitCommand,
  positionals: { name: "names", description: "the dispatches to wait for (names or ids)", multiple: true },
  omit: ["timeout"],
  extra: {
    timeoutS: {
      schema: {
        type: "integer",
        minimum: 1,
        maximum: WAIT_MAX_S,
        default: WAIT_DEFAULT_S,
        description: `seconds to wait at most (default ${WAIT_DEFAULT_S}); call again to wait longer`,
      },
      check: z.number().int().min(1).max(WAIT_MAX_S),
      apply(value, input) {
        input.values.timeout = `${value as number}s`;
      },
      fallback: WAIT_DEFAULT_S,
    },
  },
  readOnly: true,
  line: ({ records, running, race }) => {
    if (race !== undefined) return raceLine(race);
    const done = records.map((r) => `${r.name ?? r.dispatchId} ${r.status}${outcomeSuffix(r)}`);
    const live = running.map((r) => `${r.name ?? r.dispatchId} ${r.state}${attemptSuffix(r)}`);
    return [
      done.length === 0 ? "none recorded" : `recorded: ${done.join(", ")}`,
      ...(live.length === 0 ? [] : [`still running: ${live.join(", ")}`]),
    ].join("; ");
  },
};

const usageTool: ToolSpec<UsageReport> = {
  name: "usage",
  title: "What catherd's dispatches spent",
  description:
    "Spend totals of every dispatch of the home (or of one run): tokens as billed and dollars where a " +
    "figure is known — the CLI's own, or catherd's estimate at list prices (pricedUsd) — grouped by run, " +
    "backend, model, day or name, live dispatches so far. As `catherd usage`.",
  command: usageCommand,
  readOnly: true,
  line: ({ total, by, groups }) =>
    `${total.dispatches} dispatches, ${total.tokens} tokens, $${total.costUsd.toFixed(2)}${total.unpriced > 0 ? " and more without a figure" : ""}; ${groups.length} by ${by}`,
};

const sendTool: ToolSpec<Sent> = {
  name: "send",
  title: "Talk to a running agent",
  description:
    "Send a message to a running steerable dispatch (dispatched with steerable or keepOpen; claude-code): it " +
    "joins the conversation as soon as the CLI can take it (mid-turn, after the running tool's result) and the " +
    "call returns at once with the message's id; show lists its state (queued, delivered, acted, failed). " +
    "interrupt: stop the current turn first; the message starts the next. To a dispatch that has ended, the " +
    "message becomes a follow-up turn, and the result says so. As `catherd send`.",
  command: sendCommand,
  positionals: ref("talk to"),
  omit: ["file", "wait"],
  extra: {
    text: {
      schema: { type: "string", description: "the message" },
      check: z.string().min(1),
      apply(value, input) {
        input.positionals.push(value as string);
      },
    },
  },
  madeDispatches: ({ sent }) => [sent.followUp?.dir ?? sent.dir],
  readOnly: false,
  line: ({ sent: s }) =>
    s.followUp === null
      ? `${s.name ?? s.dispatchId}: message ${s.id} ${s.state}`
      : `${s.name ?? s.dispatchId}: had ended; follow-up ${s.followUp.dispatchId} started`,
};

const answerTool: ToolSpec<AnsweredData> = {
  name: "answer",
  title: "Answer what a running agent asked",
  description:
    "Answer a question a steerable dispatch asked (dispatched with onQuestion; the server notifies each " +
    "question, and show lists them): allow or deny a permission (why: what the agent reads), or give a " +
    "question's answer as text. The first answer stands and reaches the agent once. As `catherd answer`.",
  command: answerCommand,
  positionals: ref("answer"),
  extra: {
    question: {
      schema: { type: "string", description: "the question's id: q1, q2, …" },
      check: z.string().min(1),
      apply(value, input) {
        input.positionals.push(value as string);
      },
    },
    text: {
      schema: { type: "string", description: "a question's answer (instead of allow or deny)" },
      check: z.string().min(1),
      apply(value, input) {
        input.positionals.push(value as string);
      },
    },
  },
  readOnly: false,
  line: ({ answered: a }) =>
    `${a.name ?? a.dispatchId} ${a.id}: ${a.text !== null ? "answered" : a.allow ? "allowed" : "denied"}`,
};

/** Every tool, in the order tools/list gives them. */
export const TOOLS: readonly ToolSpec[] = [
  dispatchTool,
  waitTool,
  resultTool,
  statusTool,
  showTool,
  logsTool,
  cancelTool,
  sendTool,
  answerTool,
  usageTool,
  doctorTool,
] as unknown as readonly ToolSpec[];

function firstLine(text: string | null): string | null {
  if (text === null) return null;
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
