import { BRIDGE_LINE, uuidOfMessageId } from "../domain/steering/opencode-bridge-wire.js";
import type { AskFact, LineFacts } from "../domain/watch/facts.js";
import { NEUTRAL, PROGRESS } from "../domain/watch/facts.js";
import { errorFact } from "./classify.js";
import { asId, asRecord, asString, describeToolCall, oneLine } from "./line-parsing.js";
import { opencodeError, stepUsage } from "./opencode-steps.js";

// The stream of a steerable opencode dispatch (specs/backends.md "opencode 1.18.33: `opencode serve`";
// test/fixtures/recorded/opencode-serve): what catherd's opencode bridge writes — its own lines
// (`bridge.*`: the server up, the session, opencode's answer to each op, the session busy and idle as its
// polls decide, a retry, a failure) and the server's events of the session as opencode sends them on
// GET /event, `{type, properties}`, each part once per state:
// - message.updated{info{id, role: user}}: the echo of a prompt; catherd's message ids carry the message's
//   uuid (opencode-bridge-wire.ts), so the echo names the message: the `delivered` receipt.
// - message.part.updated{part}: a tool part (pending, running, completed | error) open from running to its
//   end; a text part, whole; reasoning; step-finish{tokens, cost} — the usage, as `run --format json`'s.
// - session.error{error{name, data}} (MessageAbortedError after an abort), session.status{busy | retry}.
// - permission.asked{id, permission, patterns, metadata}, question.asked{id, questions}; their
//   permission.replied / question.replied / question.rejected close them.
// A turn ends at `bridge.idle` (the server idle with every prompt answered: its event stream is not
// trusted with that), which carries the last reply's error.

/** Whether a parsed line is one of the bridge's stream (its own or a server event), not `run`'s. */
export function isServeLine(event: Record<string, unknown>): boolean {
  const type = asString(event.type) ?? "";
  return type.startsWith("bridge.") || (asRecord(event.properties) !== null && type.includes("."));
}

/** One line of the bridge's stream. */
export function parseServe(event: Record<string, unknown>): LineFacts {
  const type = asString(event.type) ?? "";
  return type.startsWith("bridge.")
    ? parseBridgeLine(type, event)
    : parseEvent(type, asRecord(event.properties) ?? {});
}

function parseBridgeLine(type: string, line: Record<string, unknown>): LineFacts {
  switch (type) {
    case BRIDGE_LINE.server:
      return { progress: true, describe: `opencode serve up in ${String(line.ms)} ms` };
    case BRIDGE_LINE.session: {
      const thread = asId(line.sessionID);
      return thread === null ? PROGRESS : { progress: true, thread, describe: "session opened" };
    }
    case BRIDGE_LINE.answer:
      return answered(line);
    case BRIDGE_LINE.busy: {
      const id = asString(line.sessionID) ?? "session";
      return { progress: true, turn: { id, running: true }, describe: "working" };
    }
    case BRIDGE_LINE.idle: {
      const ended = turnEnded(asString(line.sessionID) ?? "session", asRecord(line.error));
      const reply = asString(line.reply);
      // The reply as the session's messages hold it: the stream's events can come out of order.
      return reply === null || ended.final?.isError === true
        ? ended
        : { ...ended, reply: { text: reply, mode: "replace" } };
    }
    case BRIDGE_LINE.retry:
      return retried(line);
    case BRIDGE_LINE.rejected:
      return { progress: true, describe: `rejected a ${String(line.kind)}: no --on-question` };
    case BRIDGE_LINE.failed: {
      const text = asString(line.message) ?? "the opencode bridge failed";
      return {
        progress: true,
        final: { isError: true, message: text },
        error: errorFact({ text }),
        describe: oneLine(text),
      };
    }
    default:
      return PROGRESS;
  }
}

/** opencode's answer to an op of catherd's: taken (`ok`) or refused. */
function answered(line: Record<string, unknown>): LineFacts {
  const id = asString(line.id);
  if (id === null) return NEUTRAL;
  const ok = line.ok === true;
  const facts: LineFacts = { progress: false, answered: { id, ok } };
  return ok ? facts : { ...facts, describe: `refused ${id}: ${oneLine(asString(line.error) ?? "")}` };
}

/** The end of a turn: its final, a failure's error with it; an aborted turn is no answer. */
function turnEnded(id: string, error: Record<string, unknown> | null): LineFacts {
  const ended = { progress: true, turn: { id, running: false } };
  if (error === null)
    return { ...ended, final: { isError: false, message: null }, describe: "turn completed" };
  if (error.name === "MessageAbortedError") {
    return { ...ended, final: { isError: true, message: "turn interrupted" }, describe: "turn interrupted" };
  }
  const fact = opencodeError(error, null);
  return {
    ...ended,
    final: { isError: true, message: fact.message },
    error: fact,
    describe: `failed: ${oneLine(fact.message)}`,
  };
}

/**
 * session.status retry: opencode waits to ask its provider again. Shown, not judged: `run --format json`
 * prints nothing of its retries, and a steerable dispatch ends with the verdict a plain one has (its
 * failures after opencode's own retries, a hang as idle time), so no retry fact is made of it.
 */
function retried(line: Record<string, unknown>): LineFacts {
  const attempt = typeof line.attempt === "number" ? line.attempt : "?";
  return { progress: false, describe: `retrying ${attempt}: ${oneLine(asString(line.message) ?? "")}` };
}

function parseEvent(type: string, props: Record<string, unknown>): LineFacts {
  switch (type) {
    case "message.updated":
      return userMessage(asRecord(props.info) ?? {});
    case "message.part.updated":
      return parsePart(asRecord(props.part) ?? {});
    case "session.error": {
      const error = asRecord(props.error);
      const name = asString(error?.name) ?? "error";
      return { progress: true, describe: name === "MessageAbortedError" ? "aborted" : `error: ${name}` };
    }
    case "permission.asked":
    case "question.asked":
      return asked(type, props);
    case "permission.replied":
    case "question.replied":
    case "question.rejected": {
      const id = asString(props.requestID);
      return id === null ? NEUTRAL : { progress: false, withdrawn: id };
    }
    default:
      return NEUTRAL;
  }
}

/** A user message: catherd's (its id names the uuid) is the echo of what catherd gave. */
function userMessage(info: Record<string, unknown>): LineFacts {
  if (info.role !== "user") return NEUTRAL;
  const uuid = uuidOfMessageId(asString(info.id) ?? "");
  if (uuid === null) return PROGRESS;
  // The reply is what the agent says after the last message it took.
  return { progress: true, taken: uuid, reply: { text: "", mode: "replace" }, describe: "took a message" };
}

function parsePart(part: Record<string, unknown>): LineFacts {
  switch (part.type) {
    case "tool":
      return toolPart(part);
    case "text": {
      const text = asString(part.text);
      if (part.synthetic === true || text === null) return PROGRESS;
      return { progress: true, reply: { text, mode: "message" }, describe: `says ${oneLine(text)}` };
    }
    case "reasoning":
      return { progress: true, describe: "thinking" };
    case "step-finish": {
      const reason = asString(part.reason) ?? "unknown";
      const usage = stepUsage(asRecord(part.tokens) ?? {}, part.cost);
      return { progress: true, ...usage, describe: `step finished (${reason})` };
    }
    default:
      return PROGRESS;
  }
}

/** A tool part: open while it runs, closed when it completes or fails. */
function toolPart(part: Record<string, unknown>): LineFacts {
  const id = asString(part.id) ?? asString(part.callID) ?? "";
  const state = asRecord(part.state) ?? {};
  const label = describeToolCall(asString(part.tool) ?? "tool", asRecord(state.input));
  switch (state.status) {
    case "running":
      // What the agent said before a tool call was narration: the reply is what it says after the last one.
      return {
        progress: true,
        toolsOpened: [{ id, label }],
        reply: { text: "", mode: "replace" },
        describe: label,
      };
    case "completed":
      return { progress: true, toolsClosed: [id], describe: `done ${label}` };
    case "error":
      return {
        progress: true,
        toolsClosed: [id],
        describe: `failed ${label}: ${oneLine(asString(state.error) ?? "")}`,
      };
    default:
      return PROGRESS;
  }
}

/** An ask of the server's: a permission (run this command? edit this file?) or the question tool's. */
function asked(type: string, props: Record<string, unknown>): LineFacts {
  const id = asString(props.id);
  if (id === null) return PROGRESS;
  const permission = type === "permission.asked";
  const asks: AskFact = permission
    ? {
        kind: "permission",
        asks: permissionAsks(props),
        tool: asString(props.permission),
        input: props,
        request: { id, kind: "permission" },
      }
    : {
        kind: "question",
        asks: questionAsks(props),
        tool: "question",
        input: props,
        request: { id, kind: "question" },
      };
  return { progress: true, asks, describe: `asks: ${oneLine(asks.asks)}` };
}

function permissionAsks(props: Record<string, unknown>): string {
  const command = asString(asRecord(props.metadata)?.command);
  if (props.permission === "bash" && command !== null) return `$ ${command}`;
  const patterns = Array.isArray(props.patterns) ? props.patterns.filter((p) => typeof p === "string") : [];
  return `${asString(props.permission) ?? "permission"} ${patterns.join(", ")}`.trim();
}

function questionAsks(props: Record<string, unknown>): string {
  const questions = Array.isArray(props.questions) ? props.questions.map(asRecord) : [];
  return asString(questions[0]?.question) ?? "a question";
}
