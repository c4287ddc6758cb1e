import type { ErrorFact } from "../domain/ending/failure.js";
import type { AskFact, LineFacts } from "../domain/watch/facts.js";
import { NEUTRAL, PROGRESS } from "../domain/watch/facts.js";
import { errorFact, retryKind, statusInText } from "./classify.js";
import { codexUse } from "./codex-usage.js";
import { APP_SERVER_SPELLING, codexWindows } from "./codex-windows.js";
import { asId, asRecord, asString, oneLine, usageFacts } from "./line-parsing.js";

// `codex app-server` (a steerable codex dispatch, specs/backends.md "Session protocols";
// test/fixtures/recorded/codex-app-server, codex 0.171.0): JSON-RPC 2.0 over JSONL without the "jsonrpc"
// header. Three shapes of line: a notification {method, params}, a request of the server's {method, id,
// params} (an approval, a question), an answer to a request of catherd's {id, result | error}. The shapes
// were read from `codex app-server generate-ts` of the pinned version:
// - thread/started{thread.id}; turn/started{turn.id}; item/started|item/completed{item, turnId};
//   turn/completed{turn{id, status: completed|interrupted|failed, error}}.
// - item types (camelCase, not exec's snake_case): userMessage{clientId} — the echo of what catherd sent,
//   by the clientUserMessageId it was sent with —, agentMessage{text}, reasoning, commandExecution{command},
//   fileChange{changes}, mcpToolCall{server, tool}, webSearch{query}, dynamicToolCall{tool}.
// - thread/tokenUsage/updated{tokenUsage{total, last}}: `total` is the THREAD's, as exec's turn.completed.
// - error{error{message, codexErrorInfo, additionalDetails}, willRetry}: a retry ("Reconnecting... n/m",
//   the provider's words in additionalDetails) while willRetry, else the failure; codexErrorInfo is a word
//   (contextWindowExceeded, usageLimitExceeded…: classify.ts) or an object carrying an httpStatusCode.

/** Item types that run something: open from item/started until item/completed. */
const TOOL_ITEMS = new Set(["commandExecution", "mcpToolCall", "fileChange", "webSearch", "dynamicToolCall"]);
const RECONNECTING = /^Reconnecting\.{3}\s*(\d+)\/(\d+)/;
/** The request URL codex appends to a failure: not the provider's words, and it can carry a key. */
const URL_SUFFIX = /,? url: \S+$/;

/** A line of the app-server's stdout: a notification, a request of the server's, or an answer. */
export function parseAppServer(message: Record<string, unknown>): LineFacts {
  const method = asString(message.method);
  const params = asRecord(message.params) ?? {};
  if (method === null) return parseAnswer(message);
  if (message.id !== undefined) return parseServerRequest(method, message.id, params);
  return parseNotification(method, params);
}

/** Whether a JSON object is an app-server message rather than an `exec --json` event. */
export function isAppServerLine(event: Record<string, unknown>): boolean {
  return event.type === undefined && (event.method !== undefined || event.id !== undefined);
}

function parseNotification(method: string, params: Record<string, unknown>): LineFacts {
  switch (method) {
    case "thread/started":
      return threadFacts(asRecord(params.thread), "thread started");
    case "turn/started": {
      const id = asId(asRecord(params.turn)?.id);
      return id === null
        ? PROGRESS
        : { progress: true, turn: { id, running: true }, describe: "turn started" };
    }
    case "turn/completed":
      return turnCompleted(asRecord(params.turn) ?? {});
    case "item/started":
    case "item/completed":
      return parseItem(method === "item/started", asRecord(params.item));
    case "thread/tokenUsage/updated":
      return tokenUsage(asRecord(asRecord(params.tokenUsage)?.total));
    case "error":
      return parseError(params);
    case "serverRequest/resolved": {
      // The server cleared a request of its own (answered, or its turn ended): its question, if open, closes.
      const id = params.requestId;
      return typeof id === "string" || typeof id === "number" ? { progress: false, withdrawn: id } : NEUTRAL;
    }
    case "account/rateLimits/updated":
      return rateLimits(asRecord(params.rateLimits));
    // Bookkeeping of the server's: no sign of work.
    case "remoteControl/status/changed":
      return NEUTRAL;
    default:
      return PROGRESS;
  }
}

/** The account's windows (codex-windows.ts): bookkeeping, no sign of work. */
function rateLimits(snapshot: Record<string, unknown> | null): LineFacts {
  const quota = codexWindows(snapshot, APP_SERVER_SPELLING);
  return quota.length === 0 ? NEUTRAL : { progress: false, quota };
}

function threadFacts(thread: Record<string, unknown> | null, describe: string): LineFacts {
  const id = asId(thread?.id);
  return id === null ? PROGRESS : { progress: true, thread: id, describe };
}

/** The end of a turn: its final, a failure's error with it; an interrupted turn is no answer. */
function turnCompleted(turn: Record<string, unknown>): LineFacts {
  const id = asId(turn.id);
  const ended = id === null ? {} : { turn: { id, running: false } };
  if (turn.status === "failed") {
    const error = turnError(asRecord(turn.error) ?? {});
    return {
      progress: true,
      ...ended,
      final: { isError: true, message: error.message },
      error,
      describe: `failed: ${oneLine(error.message)}`,
    };
  }
  if (turn.status === "interrupted") {
    return {
      progress: true,
      ...ended,
      final: { isError: true, message: "turn interrupted" },
      describe: "turn interrupted",
    };
  }
  return { progress: true, ...ended, final: { isError: false, message: null }, describe: "turn completed" };
}

function parseItem(started: boolean, item: Record<string, unknown> | null): LineFacts {
  if (item === null) return PROGRESS;
  const id = asString(item.id) ?? "";
  const type = asString(item.type) ?? "";
  if (TOOL_ITEMS.has(type)) {
    const label = describeItem(item);
    // What the agent said before a tool call was narration: the reply is what it says after the last one.
    if (started) {
      return {
        progress: true,
        toolsOpened: [{ id, label }],
        reply: { text: "", mode: "replace" },
        describe: label,
      };
    }
    return { progress: true, toolsClosed: [id], describe: `done ${label}` };
  }
  if (type === "userMessage") return started ? userMessage(item) : PROGRESS;
  if (type === "agentMessage" && !started) {
    const text = asString(item.text) ?? "";
    return { progress: true, reply: { text, mode: "message" }, describe: `says ${oneLine(text)}` };
  }
  if (type === "reasoning") return { progress: true, describe: "thinking" };
  return PROGRESS;
}

/**
 * The echo of a user message: `clientId` is the clientUserMessageId it was sent with (catherd's uuid of
 * the message); the reply is what the agent says after the last message it took.
 */
function userMessage(item: Record<string, unknown>): LineFacts {
  const clientId = asString(item.clientId);
  if (clientId === null) return PROGRESS;
  return {
    progress: true,
    taken: clientId,
    reply: { text: "", mode: "replace" },
    describe: "took a message",
  };
}

function describeItem(item: Record<string, unknown>): string {
  switch (item.type) {
    case "commandExecution":
      return `$ ${oneLine(unwrapShell(asString(item.command) ?? ""))}`;
    case "fileChange": {
      const changes = Array.isArray(item.changes) ? item.changes.map(asRecord) : [];
      const paths = changes.map((c) => asString(c?.path)).filter((p): p is string => p !== null);
      return `edit ${oneLine(paths.join(", ") || "files")}`;
    }
    case "mcpToolCall":
      return `mcp ${asString(item.server) ?? "?"}.${asString(item.tool) ?? "?"}`;
    case "webSearch":
      return `search ${oneLine(asString(item.query) ?? "")}`;
    default:
      return `${String(item.type)} ${asString(item.tool) ?? ""}`.trim();
  }
}

/** `/bin/bash -lc 'npm test'` (or with double quotes) → `npm test`: what the agent meant to run. */
export function unwrapShell(command: string): string {
  const m = /^\S*(?:ba|z)?sh -l?c (['"])(.*)\1$/s.exec(command);
  return m?.[2] ?? command;
}

const USAGE_KEYS = {
  input_tokens: "inputTokens",
  cached_input_tokens: "cachedInputTokens",
  cache_write_input_tokens: "cacheWriteInputTokens",
  output_tokens: "outputTokens",
  reasoning_output_tokens: "reasoningOutputTokens",
} as const;

/** The thread's total, as exec's turn.completed reports it: the same counts under camelCase names. */
function tokenUsage(total: Record<string, unknown> | null): LineFacts {
  if (total === null) return PROGRESS;
  const snake: Record<string, unknown> = {};
  for (const [key, camel] of Object.entries(USAGE_KEYS)) snake[key] = total[camel];
  return { progress: true, ...usageFacts("thread", null, [codexUse(null, snake)]), describe: "usage" };
}

/** A turn's error: codexErrorInfo's word or status, and the message without the request URL. */
function turnError(error: Record<string, unknown>): ErrorFact {
  const raw = asString(error.message) ?? "turn failed";
  const text = raw.replace(URL_SUFFIX, "");
  const { code, status } = errorInfo(error.codexErrorInfo);
  const quoted = status ?? statusInText(text);
  return errorFact({ text, status: quoted, codes: [code], words: quoted === null ? "cli" : "provider" });
}

/** codexErrorInfo: a word ("contextWindowExceeded") or {httpConnectionFailed: {httpStatusCode}}. */
function errorInfo(info: unknown): { code: string | null; status: number | null } {
  if (typeof info === "string") return { code: info, status: null };
  const record = asRecord(info);
  if (record === null) return { code: null, status: null };
  const [code, detail] = Object.entries(record)[0] ?? [null, null];
  const status = asRecord(detail)?.httpStatusCode;
  return { code, status: typeof status === "number" ? status : null };
}

function parseError(params: Record<string, unknown>): LineFacts {
  const error = asRecord(params.error) ?? {};
  const message = asString(error.message) ?? "error";
  const reconnect = RECONNECTING.exec(message);
  if (params.willRetry === true || reconnect !== null) {
    const attempt = reconnect === null ? null : Number(reconnect[1]);
    const max = reconnect === null ? null : Number(reconnect[2]);
    const cause = (asString(error.additionalDetails) ?? message).replace(URL_SUFFIX, "");
    const status = errorInfo(error.codexErrorInfo).status ?? statusInText(cause);
    const retry = { attempt, max, message: cause, status, kind: retryKind({ status, text: cause }) };
    return { progress: false, retry, describe: `retrying ${attempt ?? "?"}/${max ?? "?"}` };
  }
  const fact = turnError(error);
  return { progress: true, error: fact, describe: oneLine(fact.message) };
}

/** The id of catherd's thread/start or thread/resume request (codex-steer.ts). */
export const THREAD_REQUEST = "thread";

/** An answer to a request of catherd's: its thread, its turn, or its refusal. */
function parseAnswer(message: Record<string, unknown>): LineFacts {
  const id = message.id;
  if (typeof id !== "string") return NEUTRAL;
  const failure = asRecord(message.error);
  if (failure !== null) {
    const text = asString(failure.message) ?? "refused";
    const refused = { answered: { id, ok: false }, describe: `refused ${id}: ${oneLine(text)}` };
    // No thread (thread/resume of one codex does not have: "no rollout found…"): the session cannot open,
    // and that ends the dispatch as `exec resume` ends on it.
    if (id === THREAD_REQUEST) {
      return {
        progress: true,
        ...refused,
        final: { isError: true, message: text },
        error: errorFact({ text }),
      };
    }
    return { progress: false, ...refused };
  }
  const result = asRecord(message.result) ?? {};
  const thread = asId(asRecord(result.thread)?.id);
  const turn = asId(asRecord(result.turn)?.id);
  return {
    progress: false,
    answered: { id, ok: true },
    ...(thread === null ? {} : { thread }),
    ...(turn === null ? {} : { turn: { id: turn, running: true } }),
  };
}

/** The server's requests catherd puts as questions (specs/steering.md, "Questions"). */
function parseServerRequest(method: string, id: unknown, params: Record<string, unknown>): LineFacts {
  if (typeof id !== "string" && typeof id !== "number") return PROGRESS;
  const ask = askOf(method, params);
  if (ask === null) return PROGRESS;
  const asks: AskFact = { ...ask, input: params, request: { id, method } };
  return { progress: true, asks, describe: `asks: ${oneLine(asks.asks)}` };
}

function askOf(method: string, params: Record<string, unknown>): Omit<AskFact, "input" | "request"> | null {
  switch (method) {
    case "item/commandExecution/requestApproval": {
      const command = unwrapShell(asString(params.command) ?? "a command");
      return { kind: "permission", asks: `$ ${command}`, tool: "commandExecution" };
    }
    case "item/fileChange/requestApproval":
      return { kind: "permission", asks: asString(params.reason) ?? "edit files", tool: "fileChange" };
    case "item/tool/requestUserInput": {
      const questions = Array.isArray(params.questions) ? params.questions.map(asRecord) : [];
      return {
        kind: "question",
        asks: asString(questions[0]?.question) ?? "a question",
        tool: "requestUserInput",
      };
    }
    default:
      return null;
  }
}
