import {
  BRIDGE_LINE,
  type BridgeOp,
  EventSieve,
  messageIdOf,
  turnEnd,
} from "../../domain/steering/opencode-bridge-wire.js";
import type { BridgeArgs } from "./bridge-args.js";
import type { ServeAnswer, ServeClient } from "./serve-client.js";

// One dispatch's conversation with its `opencode serve`, as the bridge carries it out: the session opened
// (or a follow-up's found), each op of the supervisor's made an HTTP call and its answer written, the
// session's events passed on, and what the event stream cannot be trusted with decided by polling: the
// turn's end (`GET /session/status`, then the session's newest message) and the asks (`GET /permission`,
// `GET /question`). The wire: src/domain/steering/opencode-bridge-wire.ts.

/** Writes one line of the bridge's stdout. */
export type Out = (line: Record<string, unknown>) => void;

/** Deadlines: a request of the conversation, and the wait for a server that is still starting. */
const REQUEST_MS = 60_000;
const PROBE_MS = 5_000;
const READY_MS = 120_000;
/** Every how many polls of a busy session its messages are read for what the event stream missed. */
const RECONCILE_EVERY = 5;
/** How many of the newest messages are read: a turn's steps, and more. */
const RECONCILE_MESSAGES = 30;
/** How long an abort waits for its turn's end before the next op goes anyway. */
const ABORT_SETTLE_MS = 10_000;
const ABORTED = { name: "MessageAbortedError", data: { message: "Aborted" } };
/** What a rejected ask says to the model when no one takes the dispatch's questions. */
const NO_ONE_ASKS = "denied: this run takes no questions (catherd dispatch without --on-question)";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export class Bridge {
  private sessionID: string | null = null;
  /** What the bridge last said of the session: working on what it was given, or not. */
  private busy = false;
  /** An abort went since the last prompt: the turn ends however far it got. */
  private aborted = false;
  /** Counts the prompts taken: a turn's end checked before one was taken does not stand after it. */
  private generation = 0;
  private checking = false;
  private retry = "";
  /** The uuids of the messages given: each reaches opencode once, whoever gives it again. */
  private readonly given = new Set<string>();
  private counter = 0;
  /** When the session was opened (the server's clock is this machine's): older messages are not this run's. */
  private openedAt = Number.POSITIVE_INFINITY;
  private polls = 0;
  private readonly sieve = new EventSieve(() => this.sessionID);

  constructor(
    private readonly client: ServeClient,
    private readonly args: BridgeArgs,
    private readonly out: Out,
    private readonly now: () => number = Date.now,
  ) {}

  /** Opens the conversation: a new session, or the follow-up's (which must exist). Throws what went wrong. */
  async open(): Promise<void> {
    await this.ready();
    const { session } = this.args;
    const answer =
      session === null
        ? await this.client.call("POST", "/session", {}, REQUEST_MS)
        : await this.client.call("GET", `/session/${encodeURIComponent(session)}`, undefined, REQUEST_MS);
    const id = isRecord(answer.json) ? answer.json.id : null;
    if (answer.status !== 200 || typeof id !== "string") {
      throw new Error(
        session === null
          ? `opencode serve did not create a session (HTTP ${answer.status}: ${answer.text.slice(0, 200)})`
          : `Session not found: ${session}`,
      );
    }
    this.sessionID = id;
    this.openedAt = this.now();
    this.out({ type: BRIDGE_LINE.session, sessionID: id, resumed: session !== null });
  }

  /** Waits, each probe with its own deadline, until the server answers a request. */
  private async ready(): Promise<void> {
    const until = this.now() + READY_MS;
    for (;;) {
      try {
        const answer = await this.client.call("GET", "/session/status", undefined, PROBE_MS);
        if (answer.status === 200) return;
      } catch (error) {
        if (this.now() >= until) throw error;
      }
      if (this.now() >= until) throw new Error("opencode serve did not answer within 120 s");
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Carries out one op of the supervisor's and writes opencode's answer. */
  async perform(op: BridgeOp): Promise<void> {
    try {
      const answer = await this.request(op);
      const ok = answer === null || (answer.status >= 200 && answer.status < 300);
      this.out({ type: BRIDGE_LINE.answer, id: op.id, ok, ...(ok ? {} : { error: errorOf(answer) }) });
    } catch (error) {
      this.out({ type: BRIDGE_LINE.answer, id: op.id, ok: false, error: String(error) });
    }
  }

  private async request(op: BridgeOp): Promise<ServeAnswer | null> {
    const session = encodeURIComponent(this.sessionID ?? "");
    switch (op.op) {
      case "prompt":
        return this.prompt(op.uuid, op.text);
      case "abort":
        return this.abort(session);
      case "reply": {
        const body = { reply: op.reply, ...(op.message === undefined ? {} : { message: op.message }) };
        return this.client.call("POST", `/permission/${encodeURIComponent(op.permission)}/reply`, body);
      }
      case "question-reply":
        return this.client.call("POST", `/question/${encodeURIComponent(op.question)}/reply`, {
          answers: op.answers,
        });
      case "question-reject":
        return this.client.call("POST", `/question/${encodeURIComponent(op.question)}/reject`, {});
      case "end":
        return null;
    }
  }

  /**
   * Aborts the running turn and says its end before the next op goes: a redirect's prompt must start a
   * turn of its own, whose final is the one that counts (the supervisor takes the aborted turn's out of
   * the judged stream). The server goes idle within a moment of the abort; the wait is bounded.
   */
  private async abort(session: string): Promise<ServeAnswer> {
    this.aborted = true;
    const answer = await this.client.call("POST", `/session/${session}/abort`, {}, REQUEST_MS);
    const until = this.now() + ABORT_SETTLE_MS;
    while (this.busy && this.now() < until) {
      if (await this.idleNow()) await this.checkEnd();
      if (this.busy) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return answer;
  }

  /** Whether the server says the session is idle (it lists only sessions that are not). */
  private async idleNow(): Promise<boolean> {
    try {
      const status = await this.client.call("GET", "/session/status", undefined, PROBE_MS);
      const mine = isRecord(status.json) ? status.json[this.sessionID ?? ""] : undefined;
      return status.status === 200 && (!isRecord(mine) || mine.type === "idle");
    } catch {
      return false;
    }
  }

  /** prompt_async with the message id that names the message; a message given before is not sent again. */
  private async prompt(uuid: string, text: string): Promise<ServeAnswer | null> {
    if (this.given.has(uuid)) return null;
    const { model, variant } = this.args;
    const body = {
      messageID: messageIdOf(uuid, this.now(), this.counter++),
      parts: [{ type: "text", text }],
      ...(model === null ? {} : { model }),
      ...(variant === null ? {} : { variant }),
    };
    const session = encodeURIComponent(this.sessionID ?? "");
    const answer = await this.client.call("POST", `/session/${session}/prompt_async`, body, REQUEST_MS);
    if (answer.status < 200 || answer.status >= 300) return answer;
    this.given.add(uuid);
    this.generation += 1;
    this.aborted = false;
    if (!this.busy) {
      this.busy = true;
      this.out({ type: BRIDGE_LINE.busy, sessionID: this.sessionID });
    }
    return answer;
  }

  /** One event of the server's: passed on if it is the session's and new; an idle status checks the turn. */
  onEvent(event: Record<string, unknown>): void {
    if (!this.sieve.passes(event)) return;
    const type = event.type;
    if ((type === "permission.asked" || type === "question.asked") && !this.args.asks) {
      void this.rejectAsk(type, isRecord(event.properties) ? event.properties : {});
      return;
    }
    this.out(event);
    const status = isRecord(event.properties) ? event.properties.status : null;
    if (type === "session.status" && isRecord(status) && status.type === "idle") void this.checkEnd();
  }

  /** A poll: the session's status (its turn's end, its retries) and the asks the stream may have missed. */
  async poll(): Promise<void> {
    if (this.sessionID === null) return;
    try {
      const status = await this.client.call("GET", "/session/status", undefined, PROBE_MS);
      const mine = isRecord(status.json) ? status.json[this.sessionID] : undefined;
      if (isRecord(mine) && mine.type === "retry") this.sayRetry(mine);
      if (!isRecord(mine) || mine.type === "idle") await this.checkEnd();
      else if (++this.polls % RECONCILE_EVERY === 0) await this.reconcile();
      await this.pollAsks("/permission", "permission.asked");
      await this.pollAsks("/question", "question.asked");
    } catch {
      // no answer within the deadline: the next poll asks again
    }
  }

  private sayRetry(status: Record<string, unknown>): void {
    const key = `${String(status.attempt)} ${String(status.next)}`;
    if (key === this.retry) return;
    this.retry = key;
    this.out({
      type: BRIDGE_LINE.retry,
      attempt: status.attempt,
      message: status.message,
      next: status.next,
    });
  }

  private async pollAsks(path: string, type: string): Promise<void> {
    const answer = await this.client.call("GET", path, undefined, PROBE_MS);
    const asks = Array.isArray(answer.json) ? answer.json.filter(isRecord) : [];
    for (const ask of asks) this.onEvent({ type, properties: ask });
  }

  /** Says the turn ended once the server is idle and its newest message is a finished reply. */
  private async checkEnd(): Promise<void> {
    if (!this.busy || this.checking || this.sessionID === null) return;
    this.checking = true;
    try {
      const generation = this.generation;
      const messages = await this.reconcile();
      const end = turnEnd(messages, this.aborted);
      if (!end.ended || generation !== this.generation || !this.busy) return;
      // An aborted turn ends aborted, though it ended before its reply began.
      const error = end.error ?? (this.aborted ? ABORTED : null);
      this.busy = false;
      this.retry = "";
      this.out({ type: BRIDGE_LINE.idle, sessionID: this.sessionID, error, reply: end.reply });
    } catch {
      // the next poll checks again
    } finally {
      this.checking = false;
    }
  }

  /**
   * The session's newest messages, and what the event stream missed of them passed on (it closes a moment
   * into a turn, and what the server said meanwhile is lost): the echo of a prompt, a tool's end, the
   * reply's text, a step's usage — each once, through the sieve. Messages from before the session was
   * opened (a follow-up's session holds its earlier turns) are not this run's.
   */
  private async reconcile(): Promise<unknown[]> {
    const session = this.sessionID ?? "";
    const path = `/session/${encodeURIComponent(session)}/message?limit=${RECONCILE_MESSAGES}`;
    const answer = await this.client.call("GET", path, undefined, PROBE_MS);
    const messages = Array.isArray(answer.json) ? answer.json.filter(isRecord) : [];
    for (const message of messages) {
      const info = isRecord(message.info) ? message.info : {};
      const created = isRecord(info.time) && typeof info.time.created === "number" ? info.time.created : 0;
      if (created < this.openedAt) continue;
      this.onEvent({ type: "message.updated", properties: { sessionID: session, info } });
      const parts = Array.isArray(message.parts) ? message.parts.filter(isRecord) : [];
      for (const part of parts)
        this.onEvent({ type: "message.part.updated", properties: { sessionID: session, part } });
    }
    return messages;
  }

  /** An ask no one takes: rejected at once, as `opencode run` rejects what would ask. */
  private async rejectAsk(type: string, ask: Record<string, unknown>): Promise<void> {
    const id = encodeURIComponent(String(ask.id));
    const permission = type === "permission.asked";
    this.out({ type: BRIDGE_LINE.rejected, kind: permission ? "permission" : "question", id: ask.id });
    try {
      if (permission) {
        await this.client.call("POST", `/permission/${id}/reply`, { reply: "reject", message: NO_ONE_ASKS });
      } else {
        await this.client.call("POST", `/question/${id}/reject`, {});
      }
    } catch {
      // the poll finds it again only if it is still pending: the sieve has let it through once
    }
  }
}

function errorOf(answer: ServeAnswer | null): string {
  if (answer === null) return "no answer";
  return `HTTP ${answer.status}: ${answer.text.slice(0, 500)}`;
}
