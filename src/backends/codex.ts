import type { ErrorFact } from "../domain/ending/failure.js";
import type { LineFacts, ToolOpen } from "../domain/watch/facts.js";
import { PROGRESS } from "../domain/watch/facts.js";
import { errorFact, providerBody, retryKind, statusInText } from "./classify.js";
import { isAppServerLine, parseAppServer, unwrapShell } from "./codex-app-server.js";
import { appServerPlan, codexSteer } from "./codex-steer.js";
import { codexUse } from "./codex-usage.js";
import { codexWindows, ROLLOUT_SPELLING } from "./codex-windows.js";
import {
  AGENT_DEFAULTS,
  asId,
  asRecord,
  asString,
  finalizeFromSummary,
  flagValue,
  oneLine,
  parseObject,
  usageFacts,
  uuidThread,
} from "./line-parsing.js";
import type { Backend, BillingContext, PlanRequest, UsageLog, UsageLogContext } from "./types.js";

// `codex exec --json` (test/fixtures/recorded/codex). thread.started → turn.started → item.started/item.completed
// → turn.completed{usage} | turn.failed{error}. Top-level `error` lines "Reconnecting... n/m (…)" are
// provider retries; other `error` lines are the failure that precedes turn.failed.
//
// Failures (test/fixtures/recorded/codex, specs/backends.md): a retried status is in the retry's text
// ("Reconnecting... 1/5 (unexpected status 401 Unauthorized: ‹provider's message›, url: ‹url›)"), a 400's
// provider body is the whole message (raw JSON), quota and context errors are codex's own sentences with
// no status. Codex names no retry time. On stderr: "Error: thread/resume: … no rollout found …" for a
// thread that does not exist, clap's "error: unexpected argument …" for a bad command line (exit 2).
//
// Usage (specs/backends.md, "Usage and cost"): turn.completed carries the THREAD's total (codex's
// ThreadTokenUsage: a resumed thread's earlier runs included), once, at the end of the only turn of
// `codex exec`. Finer, and this run's own: the session's rollout file (<CODEX_HOME>/sessions/YYYY/MM/DD/
// rollout-…-<thread>.jsonl), where codex 0.171 appends a `token_usage_record` with each model response's
// `usage` and `response_id` as it completes, and a `turn_context` naming the model of each turn.
//
// Quota windows: only the rollout has them, in each answer's `token_count` event (a 429's too), read
// with the usage (codex-windows.ts). A spent plan is a 429 `usage_limit_reached` that codex prints as
// "You've hit your usage limit … try again at 8:21 PM." (local time, no date), exit 1: the record's retry
// time is the spent window's reset from the rollout (ending.ts), not those words.

/** Item types that run something: open from item.started until item.completed. todo_list is not one. */
const TOOL_ITEMS = new Set(["command_execution", "mcp_tool_call", "file_change", "web_search"]);
const RECONNECTING = /^Reconnecting\.{3}\s*(\d+)\/(\d+)(?:\s*\((.*)\))?/s;
/** The request URL codex appends to a failure: not the provider's words, and it can carry a key. */
const URL_SUFFIX = /,? url: \S+$/;

const ACCESS_SANDBOX = {
  "read-only": ["--sandbox", "read-only"],
  "workspace-write": ["--sandbox", "workspace-write"],
  full: ["--dangerously-bypass-approvals-and-sandbox"],
} as const;

function plan(request: PlanRequest) {
  // --steerable: the app-server (codex-steer.ts); every other dispatch `exec --json` (specs/backends.md).
  if (request.steer != null) return appServerPlan(request, request.steer.questions);
  const args = ["exec"];
  if (request.thread !== null) args.push("resume");
  args.push("--json", "--skip-git-repo-check");
  // Inside catherd's sandbox codex's own (bubblewrap) cannot start: catherd's enforces the level.
  // The bypass is what codex names for "externally sandboxed", and `exec resume` takes it (not --sandbox).
  if (request.sandboxed === true) args.push("--dangerously-bypass-approvals-and-sandbox");
  else if (request.access !== null) args.push(...ACCESS_SANDBOX[request.access]);
  if (request.model !== null) args.push("-m", request.model);
  if (request.effort !== null) args.push("-c", `model_reasoning_effort=${JSON.stringify(request.effort)}`);
  // --answer-schema: `codex exec --output-schema FILE`, which `exec resume` takes too (codex 0.171.0
  // --help): the model's final message is then JSON of that shape (OpenAI's strict structured outputs).
  if (request.answerSchema != null) args.push("--output-schema", request.answerSchema.path);
  args.push(...request.extraArgs);
  if (request.thread !== null) args.push(request.thread);
  // "-" makes codex read the prompt from stdin, which is the brief file: it reads to EOF, then starts.
  args.push("-");
  return { cmd: request.bin, args, env: {}, stdin: "brief" as const };
}

function describeItem(item: Record<string, unknown>): string {
  switch (item.type) {
    case "command_execution":
      return `$ ${oneLine(unwrapShell(asString(item.command) ?? ""))}`;
    case "file_change": {
      const changes = Array.isArray(item.changes) ? item.changes.map(asRecord) : [];
      const paths = changes.map((c) => asString(c?.path)).filter((p): p is string => p !== null);
      return `edit ${oneLine(paths.join(", ") || "files")}`;
    }
    case "mcp_tool_call":
      return `mcp ${asString(item.server) ?? "?"}.${asString(item.tool) ?? "?"}`;
    case "web_search":
      return `search ${oneLine(asString(item.query) ?? "")}`;
    default:
      return String(item.type);
  }
}

/** A failure codex printed: the provider's JSON body when it is one, else its text without the URL. */
function codexError(raw: string): ErrorFact {
  const body = providerBody(raw);
  if (body !== null) return errorFact({ text: body.message, codes: body.codes, words: "provider" });
  const text = raw.replace(URL_SUFFIX, "");
  const status = statusInText(text);
  // "unexpected status 401 Unauthorized: ‹message›" quotes the provider; a bare sentence is codex's own.
  return errorFact({ text, status, words: status === null ? "cli" : "provider" });
}

function parse(line: string): LineFacts {
  const event = parseObject(line);
  if (event === null) return PROGRESS;
  if (isAppServerLine(event)) return parseAppServer(event);
  switch (event.type) {
    case "thread.started": {
      const thread = asId(event.thread_id);
      return thread === null ? PROGRESS : { progress: true, thread, describe: "thread started" };
    }
    case "item.started":
    case "item.completed": {
      const item = asRecord(event.item);
      if (item === null) return PROGRESS;
      const id = asString(item.id) ?? "";
      const itemType = asString(item.type) ?? "";
      if (TOOL_ITEMS.has(itemType)) {
        const label = describeItem(item);
        if (event.type === "item.started") {
          const opened: ToolOpen = { id, label };
          // What the agent said before a tool call was narration: the reply is what it says after the last one.
          return {
            progress: true,
            toolsOpened: [opened],
            reply: { text: "", mode: "replace" },
            describe: label,
          };
        }
        return { progress: true, toolsClosed: [id], describe: `done ${label}` };
      }
      if (itemType === "agent_message" && event.type === "item.completed") {
        const text = asString(item.text) ?? "";
        // Every message after the last tool call is part of the answer (a report, then "Done.").
        return { progress: true, reply: { text, mode: "message" }, describe: `says ${oneLine(text)}` };
      }
      if (itemType === "reasoning") return { progress: true, describe: "thinking" };
      return PROGRESS;
    }
    case "error": {
      const message = asString(event.message) ?? "error";
      const reconnect = RECONNECTING.exec(message);
      if (reconnect !== null) {
        const attempt = Number(reconnect[1]);
        const max = Number(reconnect[2]);
        const cause = (reconnect[3] ?? message).replace(URL_SUFFIX, "");
        const status = statusInText(cause);
        const retry = { attempt, max, message: cause, status, kind: retryKind({ status, text: cause }) };
        return { progress: false, retry, describe: `retrying ${attempt}/${max}` };
      }
      return { progress: true, error: codexError(message), describe: oneLine(message) };
    }
    case "turn.completed": {
      const usage = asRecord(event.usage) ?? {};
      return {
        progress: true,
        final: { isError: false, message: null },
        ...usageFacts("thread", null, [codexUse(null, usage)]),
        describe: "turn completed",
      };
    }
    case "turn.failed": {
      const message = asString(asRecord(event.error)?.message) ?? "turn failed";
      const error = codexError(message);
      return {
        progress: true,
        final: { isError: true, message: error.message },
        error,
        describe: `failed: ${oneLine(error.message)}`,
      };
    }
    case "turn.started":
      return { progress: true, describe: "turn started" };
    default:
      return PROGRESS;
  }
}

/** The newest first: the folder names of sessions/ (YYYY, MM, DD) sort as dates. */
function newestFirst(names: string[]): string[] {
  return names.filter((n) => /^\d+$/.test(n)).sort((a, b) => b.localeCompare(a));
}

/** The rollout of `thread`: <CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl, newest day first. */
function locateRollout(thread: string, context: UsageLogContext): string | null {
  const home = context.env.CODEX_HOME ?? `${context.env.HOME ?? ""}/.codex`;
  const sessions = `${home}/sessions`;
  const suffix = `-${thread}.jsonl`;
  for (const year of newestFirst(context.listDir(sessions))) {
    for (const month of newestFirst(context.listDir(`${sessions}/${year}`))) {
      for (const day of newestFirst(context.listDir(`${sessions}/${year}/${month}`))) {
        const dir = `${sessions}/${year}/${month}/${day}`;
        const name = context.listDir(dir).find((n) => n.startsWith("rollout-") && n.endsWith(suffix));
        if (name !== undefined) return `${dir}/${name}`;
      }
    }
  }
  return null;
}

/**
 * A rollout line: a turn_context names the model from then on; a token_usage_record is one response's use;
 * a token_count event's `rate_limits` are the windows the answer's headers reported (codex-windows.ts).
 */
function parseRolloutLine(line: string): ReturnType<UsageLog["parse"]> {
  if (!ROLLOUT_KINDS.some((kind) => line.includes(kind))) return null;
  const event = parseObject(line);
  const payload = asRecord(event?.payload);
  if (event === null || payload === null) return null;
  const at = asString(event.timestamp);
  if (event.type === "turn_context") {
    const model = asString(payload.model);
    return model === null ? null : { at, model };
  }
  if (event.type === "event_msg" && payload.type === "token_count") {
    const quota = codexWindows(asRecord(payload.rate_limits), ROLLOUT_SPELLING);
    return quota.length === 0 ? null : { at, facts: { quota } };
  }
  if (event.type !== "token_usage_record") return null;
  const usage = asRecord(payload.usage) ?? {};
  return { at, facts: usageFacts("message", asString(payload.response_id), [codexUse(null, usage)]) };
}

/** The rollout lines read: others (most of them) are skipped before they are parsed. */
const ROLLOUT_KINDS = ['"token_usage_record"', '"turn_context"', '"token_count"'] as const;

/** The first top-level `key = "value"` of a config.toml (before any [table]), or null. */
function topLevelValue(toml: string | null, key: string): string | null {
  if (toml === null) return null;
  for (const line of toml.split("\n")) {
    if (/^\s*\[/.test(line)) return null;
    const m = new RegExp(`^\\s*${key}\\s*=\\s*"([^"]*)"`).exec(line);
    if (m?.[1] !== undefined) return m[1] === "" ? null : m[1];
  }
  return null;
}

/** `-c model="gpt-5"`: the value of one of codex's config overrides on the command line. */
function configOverride(args: readonly string[], key: string): string | null {
  let found: string | null = null;
  for (let i = 0; i < args.length - 1; i++) {
    if (args[i] !== "-c" && args[i] !== "--config") continue;
    const m = new RegExp(`^${key}=(?:"([^"]*)"|([^"\\s]+))$`).exec(args[i + 1] ?? "");
    if (m !== null) found = m[1] ?? m[2] ?? null;
  }
  return found;
}

/**
 * codex bills its model_provider's prices (openai unless configured otherwise): the model is -m, else a
 * `-c model=…`, else `model` in <CODEX_HOME>/config.toml. codex's built-in default is not readable: the
 * rollout names the model of every turn anyway.
 */
function billing(context: BillingContext) {
  const home = context.env.CODEX_HOME ?? `${context.env.HOME ?? ""}/.codex`;
  const toml = context.readText(`${home}/config.toml`);
  const model =
    flagValue(context.args, ["-m", "--model"]) ??
    configOverride(context.args, "model") ??
    topLevelValue(toml, "model");
  const provider =
    configOverride(context.args, "model_provider") ?? topLevelValue(toml, "model_provider") ?? "openai";
  return { provider, model };
}

/**
 * codex's stderr: its own failures before any event ("Error: …" from the CLI, "error: …" from its
 * argument parser), else diagnostics. Every line stays progress, as stderr is for a backend that does not
 * report retries there.
 */
function parseStderr(line: string): LineFacts {
  if (line.startsWith("error: ")) {
    return { progress: true, error: errorFact({ text: line, kind: "cli" }), describe: oneLine(line) };
  }
  if (line.startsWith("Error: ")) {
    return {
      progress: true,
      error: errorFact({ text: line.slice("Error: ".length) }),
      describe: oneLine(line),
    };
  }
  return PROGRESS;
}

export const codexBackend: Backend = {
  id: "codex",
  label: "codex",
  command: "cli",
  defaultBin: "codex",
  binEnv: "CATHERD_CODEX_BIN",
  accountVariable: "CODEX_HOME",
  // Its login: `codex login` writes auth.json in CODEX_HOME (~/.codex); an API key variable stands for one.
  login: {
    files: [{ variable: "CODEX_HOME", path: "auth.json", underHome: ".codex/auth.json" }],
    variables: ["CODEX_API_KEY", "OPENAI_API_KEY"],
  },
  installHint: "npm install -g @openai/codex",
  versionArgs: ["--version"],
  minVersion: "0.171.0",
  needsBrief: true,
  reportsUsage: true,
  plainText: false,
  answerSchemaFlag: true,
  defaults: { ...AGENT_DEFAULTS, graceAfterFinalMs: 30_000 },
  plan,
  parse,
  parseStderr,
  // thread.started.thread_id: a UUID (v7); `codex exec resume` takes it.
  checkThread: uuidThread("codex"),
  finalize: (summary, exit) => finalizeFromSummary(summary, exit),
  billing,
  usageLog: { locate: locateRollout, parse: parseRolloutLine },
  steer: codexSteer,
};
