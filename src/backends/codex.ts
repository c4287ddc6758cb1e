import type { LineFacts, ToolOpen } from "../domain/facts.js";
import { PROGRESS } from "../domain/facts.js";
import type { ErrorFact } from "../domain/failure.js";
import { errorFact, providerBody, retryKind, statusInText } from "./classify.js";
import {
  AGENT_DEFAULTS,
  asCount,
  asId,
  asRecord,
  asString,
  finalizeFromSummary,
  oneLine,
  parseObject,
  uuidThread,
} from "./common.js";
import type { Backend, PlanRequest } from "./types.js";

// `codex exec --json` (test/fixtures/recorded/codex). thread.started → turn.started → item.started/item.completed
// → turn.completed{usage} | turn.failed{error}. Top-level `error` lines "Reconnecting... n/m (…)" are
// provider retries; other `error` lines are the failure that precedes turn.failed.
//
// Failures (test/fixtures/recorded/codex, specs/backends.md): a retried status is in the retry's text
// ("Reconnecting... 1/5 (unexpected status 401 Unauthorized: ‹provider's message›, url: ‹url›)"), a 400's
// provider body is the whole message (raw JSON), quota and context errors are codex's own sentences with
// no status. Codex names no retry time. On stderr: "Error: thread/resume: … no rollout found …" for a
// thread that does not exist, clap's "error: unexpected argument …" for a bad command line (exit 2).

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
  const args = ["exec"];
  if (request.thread !== null) args.push("resume");
  args.push("--json", "--skip-git-repo-check");
  if (request.access !== null) args.push(...ACCESS_SANDBOX[request.access]);
  if (request.model !== null) args.push("-m", request.model);
  if (request.effort !== null) args.push("-c", `model_reasoning_effort=${JSON.stringify(request.effort)}`);
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

/** `/bin/bash -lc 'npm test'` (or with double quotes) → `npm test`: what the agent meant to run. */
function unwrapShell(command: string): string {
  const m = /^\S*(?:ba|z)?sh -l?c (['"])(.*)\1$/s.exec(command);
  return m?.[2] ?? command;
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
      const input = asCount(usage.input_tokens);
      return {
        progress: true,
        final: { isError: false, message: null },
        // Codex's input_tokens already includes cached_input_tokens: the common convention.
        usage: { input, cached: asCount(usage.cached_input_tokens), output: asCount(usage.output_tokens) },
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
  installHint: "npm install -g @openai/codex",
  versionArgs: ["--version"],
  minVersion: "0.171.0",
  needsBrief: true,
  plainText: false,
  defaults: { ...AGENT_DEFAULTS, graceAfterFinalMs: 30_000 },
  plan,
  parse,
  parseStderr,
  // thread.started.thread_id: a UUID (v7); `codex exec resume` takes it.
  checkThread: uuidThread("codex"),
  finalize: (summary, exit) => finalizeFromSummary(summary, exit),
};
