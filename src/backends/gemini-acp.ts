import type { ErrorFact } from "../domain/ending/failure.js";
import type { AskFact, LineFacts } from "../domain/watch/facts.js";
import { NEUTRAL, PROGRESS } from "../domain/watch/facts.js";
import { errorFact, httpStatus, providerBody } from "./classify.js";
import {
  asId,
  asRecord,
  asString,
  type ModelUseOrWhy,
  modelUse,
  oneLine,
  tokenFields,
  usageFacts,
} from "./line-parsing.js";

// `gemini --acp` (a steerable gemini dispatch, specs/backends.md "Session protocols";
// test/fixtures/recorded/gemini-acp, gemini-cli 0.61.0): the Agent Client Protocol, JSON-RPC 2.0 lines on
// stdio. Three shapes of line: a notification {method, params}, a request of gemini's {id, method, params}
// (a permission ask), an answer to a request of catherd's {id, result | error}. Read from the installed
// bundle (packages/cli/src/acp/, @agentclientprotocol/sdk's Connection) and the recordings:
// - session/update{sessionId, update{sessionUpdate}}: agent_message_chunk{content.text} (the answer, in
//   chunks), agent_thought_chunk, tool_call{toolCallId, status: in_progress, title, kind},
//   tool_call_update{toolCallId, status: completed | failed}; available_commands_update and
//   current_mode_update are bookkeeping; user_message_chunk only replays a loaded session's history.
// - session/request_permission{options[{optionId, kind: allow_always | allow_once | reject_once}],
//   toolCall{toolCallId, title, kind}}: a tool that asks sends no tool_call, only this ask and, once
//   allowed, its tool_call_update.
// - the answer to session/prompt ends the turn: {stopReason: end_turn | cancelled | max_turn_requests |
//   max_tokens, _meta.quota{token_count, model_usage[{model, token_count}]}} (the prompt's own tokens: no
//   cached count, no usage notification), or an error whose code is the provider's HTTP status (500 when
//   gemini knows none) and whose message is often the provider's JSON body.
// - gemini answers every request of catherd's, in the order it reads them, and a method it does not have
//   at once (-32601): catherd's echo request after each prompt (gemini-steer.ts) is how a prompt shows it
//   was read — gemini echoes no prompt.

/** catherd's request ids (gemini-steer.ts writes them, this parser reads their answers). */
export const ACP_IDS = {
  init: "init",
  /** session/new; `session:<id>` is session/load of thread <id>. */
  session: "session",
  /** `prompt:<uuid>`: the prompt of message <uuid>; `taken:<uuid>`: the echo request written after it. */
  prompt: "prompt:",
  taken: "taken:",
  /** The echo request that ends the opening: its refusal says gemini read the opening. */
  opened: "opened",
  /** `probe:<n>`: the echo request an n-th adopter writes first (gemini-steer.ts). */
  probe: "probe:",
} as const;

/** The method of catherd's echo request: one gemini does not have, so it refuses it at once. */
export const ECHO_METHOD = "_catherd/echo";

/** Whether a JSON object is an ACP message rather than a `--output-format stream-json` event. */
export function isAcpLine(event: Record<string, unknown>): boolean {
  return event.jsonrpc === "2.0" && event.type === undefined;
}

/** A line of gemini's ACP stdout: a notification, a request of gemini's, or an answer. */
export function parseAcp(message: Record<string, unknown>): LineFacts {
  const method = asString(message.method);
  const params = asRecord(message.params) ?? {};
  if (method === null) return parseAnswer(message);
  if (message.id !== undefined) return parseRequest(method, message.id, params);
  return method === "session/update" ? parseUpdate(asRecord(params.update) ?? {}) : PROGRESS;
}

function parseUpdate(update: Record<string, unknown>): LineFacts {
  switch (update.sessionUpdate) {
    case "agent_message_chunk": {
      const text = asString(asRecord(update.content)?.text);
      if (text === null) return PROGRESS;
      return { progress: true, reply: { text, mode: "append" }, describe: `says ${oneLine(text)}` };
    }
    case "agent_thought_chunk":
      return { progress: true, describe: "thinking" };
    case "tool_call":
      return toolCall(update);
    case "tool_call_update": {
      const id = asId(update.toolCallId);
      const status = update.status;
      if (id === null || (status !== "completed" && status !== "failed")) return PROGRESS;
      return {
        progress: true,
        toolsClosed: [id],
        describe: status === "failed" ? "tool failed" : "tool done",
      };
    }
    // Bookkeeping, and a loaded session's history replayed: no sign of work.
    case "available_commands_update":
    case "current_mode_update":
    case "user_message_chunk":
      return NEUTRAL;
    default:
      return PROGRESS;
  }
}

/** A tool call starting; one reported already ended (a loaded session's history) opens nothing. */
function toolCall(update: Record<string, unknown>): LineFacts {
  const id = asId(update.toolCallId);
  if (id === null || update.status === "completed" || update.status === "failed") return PROGRESS;
  const label = toolLabel(update);
  // Text before a tool call was narration: the reply is what the agent says after its last one.
  return {
    progress: true,
    toolsOpened: [{ id, label }],
    reply: { text: "", mode: "replace" },
    describe: label,
  };
}

/** "$ npm test" for a command (kind execute), else the tool's kind and its title. */
function toolLabel(call: Record<string, unknown>): string {
  const title = oneLine(asString(call.title) ?? "");
  const kind = asString(call.kind) ?? "tool";
  return kind === "execute" ? `$ ${title}` : `${kind} ${title}`.trim();
}

/** gemini's requests: a permission ask becomes a question (its tool open while it waits); others, progress. */
function parseRequest(method: string, id: unknown, params: Record<string, unknown>): LineFacts {
  if (method !== "session/request_permission" || (typeof id !== "number" && typeof id !== "string")) {
    return PROGRESS;
  }
  const call = asRecord(params.toolCall) ?? {};
  const label = toolLabel(call);
  const asks: AskFact = {
    kind: "permission",
    asks: label,
    tool: asString(call.kind),
    input: params,
    request: { id, method },
  };
  const toolId = asId(call.toolCallId);
  const opened = toolId === null ? {} : { toolsOpened: [{ id: toolId, label }] };
  return { progress: true, ...opened, asks, describe: `asks: ${oneLine(label)}` };
}

/** An answer to a request of catherd's: the session, the echo of a prompt, a prompt's end. */
function parseAnswer(message: Record<string, unknown>): LineFacts {
  const id = message.id;
  if (typeof id !== "string") return NEUTRAL;
  const failure = asRecord(message.error);
  const answered = { id, ok: failure === null };
  if (id.startsWith(ACP_IDS.taken)) {
    // The echo request is refused by design: its answer says gemini read the prompt before it.
    // The reply is what the agent says after the last message it took.
    const reply = { text: "", mode: "replace" as const };
    return { progress: false, answered, taken: id.slice(ACP_IDS.taken.length), reply };
  }
  if (id.startsWith(ACP_IDS.prompt)) return promptEnd(id.slice(ACP_IDS.prompt.length), message, failure);
  if (id === ACP_IDS.session || id.startsWith(`${ACP_IDS.session}:`))
    return sessionAnswer(id, message, failure);
  return { progress: false, answered };
}

/** session/new's answer (its sessionId) or session/load's (the thread its request id names). */
function sessionAnswer(
  id: string,
  message: Record<string, unknown>,
  failure: Record<string, unknown> | null,
): LineFacts {
  const answered = { id, ok: failure === null };
  if (failure !== null) {
    // No session (an unknown thread, no credentials): nothing can be given, and that ends the dispatch.
    const error = acpError(failure);
    return {
      progress: true,
      answered,
      final: { isError: true, message: error.message },
      error,
      describe: `no session: ${oneLine(error.message)}`,
    };
  }
  const loaded = id.startsWith(`${ACP_IDS.session}:`) ? id.slice(ACP_IDS.session.length + 1) : null;
  const thread = asId(asRecord(message.result)?.sessionId) ?? asId(loaded);
  return thread === null
    ? { progress: true, answered }
    : { progress: true, answered, thread, describe: "session started" };
}

/** The end of a prompt's turn: its final, its usage; a cancelled turn is no answer. */
function promptEnd(
  uuid: string,
  message: Record<string, unknown>,
  failure: Record<string, unknown> | null,
): LineFacts {
  const ended = {
    answered: { id: `${ACP_IDS.prompt}${uuid}`, ok: failure === null },
    turn: { id: uuid, running: false },
  };
  if (failure !== null) {
    const error = acpError(failure);
    return {
      progress: true,
      ...ended,
      final: { isError: true, message: error.message },
      error,
      describe: `failed: ${oneLine(error.message)}`,
    };
  }
  const result = asRecord(message.result) ?? {};
  const usage = promptUsage(uuid, asRecord(asRecord(result._meta)?.quota));
  const stop = asString(result.stopReason) ?? "end_turn";
  if (stop === "end_turn")
    return {
      progress: true,
      ...ended,
      ...usage,
      final: { isError: false, message: null },
      describe: "turn ended",
    };
  const words = stop === "cancelled" ? "turn cancelled" : `turn stopped: ${stop}`;
  const error =
    stop === "max_tokens"
      ? { error: errorFact({ text: "the context window is full (max_tokens)", kind: "context" }) }
      : {};
  return {
    progress: true,
    ...ended,
    ...usage,
    final: { isError: true, message: words },
    ...error,
    describe: words,
  };
}

/** An ACP error: the provider's status and JSON body where gemini passes them on. */
function acpError(failure: Record<string, unknown>): ErrorFact {
  const raw = asString(failure.message) ?? "refused";
  const details = asString(asRecord(failure.data)?.details);
  const text = raw === "Internal error" && details !== null ? details : raw;
  // 500 is gemini's own fallback when it knows no status: the words decide then.
  const code = httpStatus(failure.code);
  const status = code !== null && code >= 400 && code !== 500 ? code : null;
  const body = providerBody(text);
  if (body !== null)
    return errorFact({
      text: body.message,
      status: body.status ?? status,
      codes: body.codes,
      words: "provider",
    });
  return errorFact({ text, status, words: status === null ? "cli" : "provider" });
}

const COUNT_FIELDS = ["input_tokens", "output_tokens"] as const;

/** One model's share of a prompt: gemini counts no cached tokens over ACP. */
function countUse(model: string | null, counts: Record<string, unknown> | null): ModelUseOrWhy {
  if (counts === null) return "token_count is not an object";
  const f = tokenFields(counts, COUNT_FIELDS);
  if (typeof f === "string") return f;
  return modelUse(model, {
    input: f.input_tokens,
    cachedInput: 0,
    cacheWrite: 0,
    output: f.output_tokens,
    reasoning: 0,
  });
}

/** A prompt's usage, once per prompt (its uuid): by model where gemini splits it, else its total. */
function promptUsage(
  uuid: string,
  quota: Record<string, unknown> | null,
): Pick<LineFacts, "usage" | "usageIgnored"> {
  if (quota === null) return {};
  const models = Array.isArray(quota.model_usage) ? quota.model_usage.map(asRecord) : [];
  const uses =
    models.length > 0
      ? models.map((m) => countUse(asString(m?.model), asRecord(m?.token_count)))
      : [countUse(null, asRecord(quota.token_count))];
  return usageFacts("message", `${ACP_IDS.prompt}${uuid}`, uses);
}
