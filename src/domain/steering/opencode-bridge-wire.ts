// The line protocol between a steerable opencode dispatch's supervisor and catherd's opencode bridge
// (src/infra/opencode-bridge/, specs/steering.md "The seam"): the bridge is the agent process, runs
// `opencode serve` as its child and speaks HTTP to it; the supervisor writes it one op a line on the
// channel (the FIFO) and reads what happened from its stdout (the stream file). Both sides read this
// module, so that the shapes are decided in one place.

/** What the supervisor's session asks the bridge to do: one JSON object a line. */
export type BridgeOp =
  | { op: "prompt"; id: string; uuid: string; text: string }
  | { op: "abort"; id: string }
  | { op: "reply"; id: string; permission: string; reply: "once" | "reject"; message?: string }
  | { op: "question-reply"; id: string; question: string; answers: string[][] }
  | { op: "question-reject"; id: string; question: string }
  | { op: "end"; id: string };

/**
 * The bridge's own lines on its stdout (the server's events go there too, as `{type, properties}` with
 * opencode's own type names, which never start with `bridge.`).
 */
export const BRIDGE_LINE = {
  /** The server answers: `{ms}` since the bridge started it (what a steerable dispatch pays at start). */
  server: "bridge.server",
  /** The session the conversation runs in: `{sessionID, resumed}` (the thread). */
  session: "bridge.session",
  /** opencode's answer to an op: `{id, ok, error?}`; a prompt's `ok` means opencode has it. */
  answer: "bridge.answer",
  /** The session began working on what it was given: `{sessionID}`. */
  busy: "bridge.busy",
  /** The session is idle with every prompt answered: `{sessionID, error, reply}` (the last reply's). */
  idle: "bridge.idle",
  /** The session waits to retry its provider: `{attempt, message, next}`. */
  retry: "bridge.retry",
  /** An ask no one takes (the dispatch was not started with --on-question), rejected: `{kind, id}`. */
  rejected: "bridge.rejected",
  /** The bridge cannot go on (the server did not start, no such session): `{message}`; it exits 1. */
  failed: "bridge.failed",
} as const;

/** The prefix of a prompt op's id: the message's uuid follows. */
export const PROMPT_ID = "prompt:";

const HEX = /^[0-9a-f]+$/;

/**
 * The opencode message id of a message: `msg_`, twelve hex digits of the time (as opencode's own
 * ascending ids: the loop orders messages by id) and the message's uuid without dashes, so that the user
 * message opencode echoes names the message it is (`uuidOfMessageId`).
 */
export function messageIdOf(uuid: string, ms: number, counter: number): string {
  const time = (BigInt(Math.floor(ms)) * 0x1000n + BigInt(counter & 0xfff)) & 0xffffffffffffn;
  return `msg_${time.toString(16).padStart(12, "0")}${uuid.replaceAll("-", "").toLowerCase()}`;
}

/** The uuid a message id of catherd's carries (dashed, 8-4-4-4-12); null for any other id. */
export function uuidOfMessageId(id: string): string | null {
  if (!id.startsWith("msg_") || id.length !== 4 + 12 + 32) return null;
  const hex = id.slice(16);
  if (!HEX.test(hex)) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === "string";

/** An op line as the bridge reads it; null for anything else (the bridge says so and goes on). */
export function parseBridgeOp(line: string): BridgeOp | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isRecord(value) || !isString(value.id)) return null;
  return opOf(value) ? (value as BridgeOp) : null;
}

function opOf(v: Record<string, unknown>): boolean {
  switch (v.op) {
    case "prompt":
      return isString(v.uuid) && isString(v.text);
    case "abort":
    case "end":
      return true;
    case "reply":
      return isString(v.permission) && (v.reply === "once" || v.reply === "reject");
    case "question-reply":
      return isString(v.question) && Array.isArray(v.answers);
    case "question-reject":
      return isString(v.question);
    default:
      return false;
  }
}

/** How a turn stands, from the session's newest messages (turnEnd). */
export interface TurnEnd {
  ended: boolean;
  /** The last reply's error (opencode's `{name, data}`); null when it ended well. */
  error: unknown;
  /** The text of the last reply (its text parts, opencode's own synthetic ones left out); null: none. */
  reply: string | null;
}

/**
 * Whether a session the server says is idle has answered everything it was given, from its newest
 * messages (oldest first, as `GET /session/:id/message` lists them): the last one is the assistant's,
 * completed. An abort since the last prompt ends the turn however far it got. The reply is read here,
 * from the messages, and not from the event stream, whose events can come after the ones a poll
 * recovered: the last step's message is the answer (each model step is a message of its own).
 */
export function turnEnd(messages: readonly unknown[], aborted: boolean): TurnEnd {
  const last = messages.at(-1);
  const info = isRecord(last) && isRecord(last.info) ? last.info : null;
  const assistant = info?.role === "assistant";
  const error = assistant ? (info.error ?? null) : null;
  const reply = assistant && isRecord(last) ? replyOf(last.parts) : null;
  if (aborted) return { ended: true, error, reply };
  const completed = isRecord(info?.time) && info.time.completed != null;
  return { ended: assistant && (completed || error !== null), error, reply };
}

function replyOf(parts: unknown): string | null {
  const texts = (Array.isArray(parts) ? parts : [])
    .filter((p): p is Record<string, unknown> => isRecord(p) && p.type === "text" && p.synthetic !== true)
    .flatMap((p) => (isString(p.text) ? [p.text] : []));
  return texts.length === 0 ? null : texts.join("\n\n");
}

/** The event types of the server the bridge passes on (of its session); the rest are noise for catherd. */
const PASSED = new Set([
  "message.updated",
  "message.part.updated",
  "session.error",
  "session.status",
  "permission.asked",
  "permission.replied",
  "question.asked",
  "question.replied",
  "question.rejected",
]);

/**
 * Which of the server's events go to the stream: those of the session, each part once per state (a
 * tool part once pending, once running, once ended; a text part once whole), a user message once. Keeps
 * the stream file to what a reader needs, where the server repeats a part at every token.
 */
export class EventSieve {
  private readonly seen = new Set<string>();

  constructor(private readonly sessionID: () => string | null) {}

  passes(event: Record<string, unknown>): boolean {
    const type = event.type;
    const props = isRecord(event.properties) ? event.properties : null;
    if (!isString(type) || !PASSED.has(type) || props === null) return false;
    if (props.sessionID !== this.sessionID()) return false;
    const key = this.keyOf(type, props);
    if (key === null) return type !== "message.updated";
    if (key === false || this.seen.has(key)) return false;
    this.seen.add(key);
    return true;
  }

  /** What makes an event new: its part and that part's state; null when every one is new, false: none. */
  private keyOf(type: string, props: Record<string, unknown>): string | null | false {
    if (type === "message.updated") {
      const info = isRecord(props.info) ? props.info : {};
      return info.role === "user" ? `user ${String(info.id)}` : null;
    }
    if (type === "permission.asked" || type === "question.asked") return `ask ${String(props.id)}`;
    if (type !== "message.part.updated" || !isRecord(props.part)) return null;
    const part = props.part;
    const state = isRecord(part.state) ? part.state.status : undefined;
    const whole = isRecord(part.time) && part.time.end != null;
    if (part.type === "text" || part.type === "reasoning") return whole ? `part ${String(part.id)}` : false;
    return `part ${String(part.id)} ${String(state ?? "")}`;
  }
}
