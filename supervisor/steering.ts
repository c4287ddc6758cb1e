import { createHash } from "node:crypto";
import type { SessionStart, SteerProtocol, SteerSession } from "../src/backends/types.js";
import type { SteerSettings } from "../src/domain/schemas.js";
import { isOpen } from "../src/domain/steering/inbox.js";
import {
  BRIEF,
  initialSteer,
  keptOpenMs,
  lookInbox,
  type MessageMove,
  notGiven,
  observeLine,
  type SteerAction,
  type SteerConfig,
  type SteerState,
  type SteerStep,
  steerSignals,
  takeAsks,
  undelivered,
} from "../src/domain/steering/steer-decisions.js";
import type { LineFacts } from "../src/domain/watch/facts.js";
import type { SteerSignals } from "../src/domain/watch/watch.js";
import { type InboxEntry, messageIds, moveMessage, readEntry } from "../src/folder/inbox-files.js";
import { ChannelWriter, type WriteResult } from "./channel.js";
import type { SupervisorLog } from "./log.js";
import { SteeringQuestions } from "./steering-questions.js";
import { pauseAt } from "./test-hooks.js";

// The supervisor's side of talking to a running agent (specs/steering.md, "The seam"): the I/O edge of
// the pure conversation in src/domain/steering/steer-decisions.ts. It reads inbox/ and questions/ into facts, asks the
// core, and carries out what it decides: receipts and questions written, lines written to the channel —
// each line made by the backend's protocol (SteerProtocol), the only part that knows the CLI's wire format.
//
// Exactly once: a message goes to the CLI with a uuid made from the dispatch and the message, and the CLI
// skips a uuid it has seen. A supervisor that dies after writing and before the echo leaves the message
// `queued`; its adopter reads the whole stream first (an echo there marks it delivered) and writes again
// what is still queued, which the CLI skips if it had it.

/**
 * What carries the protocol's lines to the CLI (specs/steering.md, "The seam"): the FIFO on its input
 * (ChannelWriter) today; a protocol over another transport brings its own. Never blocks: a line the CLI
 * has not read yet is `pending` and goes on `flush`; `closed`: nobody reads any more.
 */
export interface SteerChannel {
  write(line: string): WriteResult;
  flush(): WriteResult;
  readonly hasPending: boolean;
  close(): void;
}

export interface SteeringInput {
  dir: string;
  dispatchId: string;
  protocol: SteerProtocol;
  settings: SteerSettings;
  /** The brief's text, given as the first message (null: a dispatch without one). */
  brief: string | null;
  /** The channel's path (the FIFO the agent reads). */
  channel: string;
  /** The dispatch's command line and environment, for the protocol's session. */
  start: SessionStart;
  log: SupervisorLog;
  wallNow: () => Date;
}

/** The uuid a message goes to the CLI with: the same for every supervisor of the dispatch (a UUID v8). */
export function messageUuid(dispatchId: string, id: string): string {
  const hex = createHash("sha256").update(`${dispatchId}/${id}`).digest("hex");
  const variant = ((Number.parseInt(hex[16] ?? "0", 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export class Steering {
  private readonly writer: SteerChannel;
  /** The protocol's side of the conversation: the lines of each message and interrupt. */
  private readonly session: SteerSession;
  private readonly config: SteerConfig;
  private state: SteerState;
  /** uuid → message id, for each message this supervisor gave (and each an echo named). */
  private readonly ids = new Map<string, string>();
  /** The inbox as last read: an entry that can no longer change (acted, failed) is not read again. */
  private readonly entries = new Map<string, InboxEntry>();
  /** questions/: read once a poll, in `look`, as inbox/ is. */
  private readonly questions: SteeringQuestions;
  /** The request ids of asks the CLI withdrew since the last look. */
  private readonly withdrawn: (string | number)[] = [];
  /** The session's first owed lines were written (the `handshake-written` test hook's point). */
  private opened = false;

  constructor(private readonly input: SteeringInput) {
    const { protocol, settings, brief } = input;
    this.writer = new ChannelWriter(input.channel);
    this.session = protocol.session(input.start);
    this.config = { joins: protocol.joins, canEnd: protocol.endLine !== undefined, settings, brief };
    this.questions = new SteeringQuestions({
      dir: input.dir,
      onQuestion: settings.onQuestion,
      protocol,
      log: input.log,
      wallNow: input.wallNow,
      write: (line) => this.writer.write(line),
    });
    this.state = initialSteer(brief, this.questions.count());
    this.ids.set(this.uuidOf(BRIEF), BRIEF);
  }

  /** The uuid a message goes to the CLI with. */
  uuidOf(id: string): string {
    return messageUuid(this.input.dispatchId, id);
  }

  /** One line's facts, as the watch should see them (observeLine). */
  observe(line: LineFacts, now: number): LineFacts {
    const facts = this.session.observe(line) ?? line;
    if (facts.withdrawn !== undefined) this.withdrawn.push(facts.withdrawn);
    const taken = facts.taken === undefined ? null : this.idOfUuid(facts.taken);
    const step = observeLine(this.state, facts, taken, now);
    this.apply(step);
    return step.facts;
  }

  /** Gives the CLI what is due (lookInbox); asks written as questions; answers given. */
  look(now: number): void {
    this.writer.flush();
    this.writeOwed();
    this.recordAsks();
    if (this.withdrawn.length > 0) this.questions.withdraw(this.withdrawn.splice(0));
    this.apply(lookInbox(this.state, this.config, this.inbox(), now));
    this.questions.answer();
  }

  /** What the watch's rules need to know (steerSignals). */
  signals(now: number): SteerSignals {
    const step = steerSignals(
      this.state,
      this.config,
      {
        queued: [...this.entries.values()].some((entry) => entry.state === "queued"),
        pending: this.writer.hasPending,
        questionDue: this.questions.due,
        wallMs: this.input.wallNow().getTime(),
      },
      now,
    );
    this.apply(step);
    return step.signals;
  }

  /** How long ended turns waited for a message, in all (the record's `keptOpenMs`). */
  keptOpenMs(now: number): number {
    return keptOpenMs(this.state, now);
  }

  /** The dispatch ends: what was not delivered never will be. */
  end(cancelled: boolean): void {
    for (const failed of undelivered(this.inbox(), cancelled)) this.move(failed);
    this.writer.close();
  }

  private apply(step: SteerStep): void {
    this.state = step.state;
    for (const action of step.actions) this.act(action);
  }

  private act(action: SteerAction): void {
    const { protocol, log } = this.input;
    switch (action.kind) {
      case "give":
        this.give(action);
        return;
      case "interrupt":
        this.writeAll(this.session.interruptLines(action.requestId));
        return;
      case "move":
        this.move(action);
        return;
      case "interrupted":
        log("interrupted", { requestId: action.requestId });
        return;
      case "end-session":
        // The core asks for it only of a protocol that has an end line (SteerConfig.canEnd).
        if (protocol.endLine !== undefined) this.writer.write(protocol.endLine("end-session"));
        log("end-session", {});
        return;
    }
  }

  private give(action: Extract<SteerAction, { kind: "give" }>): void {
    const { id, text, interrupt } = action;
    const uuid = this.uuidOf(id);
    const result = this.writeAll(this.session.userLines(text, uuid));
    if (result === "closed") {
      this.input.log("channel-closed", { message: id });
      this.state = notGiven(this.state, id);
      return;
    }
    this.ids.set(uuid, id);
    this.input.log("message-written", {
      message: id,
      uuid,
      interrupt,
      ...(result === "pending" ? { pending: true } : {}),
    });
    if (id !== BRIEF) pauseAt("message-written", this.input.dir);
  }

  /** What the session owes first (codex: its handshake); the test hook pauses after the first of it. */
  private writeOwed(): void {
    const owed = this.session.due();
    this.writeAll(owed);
    if (owed.length === 0 || this.opened) return;
    this.opened = true;
    pauseAt("handshake-written", this.input.dir);
  }

  /** Writes lines in order: `closed` if the channel refused one, else `pending` if one waits, else `written`. */
  private writeAll(lines: readonly string[]): WriteResult {
    let result: WriteResult = "written";
    for (const line of lines) {
      const wrote = this.writer.write(line);
      if (wrote === "closed") return wrote;
      if (wrote === "pending") result = wrote;
    }
    return result;
  }

  /** The message an echo is of; one this supervisor did not give is looked for in the inbox (a backlog). */
  private idOfUuid(uuid: string): string | null {
    const known = this.ids.get(uuid);
    if (known !== undefined) return known;
    const id = messageIds(this.input.dir).find((one) => this.uuidOf(one) === uuid) ?? null;
    if (id !== null) this.ids.set(uuid, id);
    return id;
  }

  /** Moves a message's receipt, if it still stands where the core saw it. */
  private move(change: MessageMove): void {
    const entry = this.entryOf(change.id);
    if (entry?.state !== change.from) return;
    const { to, why } = change;
    const moved = moveMessage(this.input.dir, entry, { to, at: this.input.wallNow(), why });
    if (moved === null) return;
    this.entries.set(entry.id, { ...entry, receipt: moved, state: moved.state });
    this.input.log("message", { id: entry.id, state: to, ...(why === undefined ? {} : { why }) });
  }

  /** The inbox in delivery order: a readdir, and a read of each entry that may still change. */
  private inbox(): InboxEntry[] {
    return messageIds(this.input.dir).map((id) => {
      const known = this.entries.get(id);
      if (known !== undefined && !isOpen(known.state)) return known;
      const entry = readEntry(this.input.dir, id);
      this.entries.set(id, entry);
      return entry;
    });
  }

  /** A message as the last look read it (or, before any look — an adopter's backlog — as it is now). */
  private entryOf(id: string): InboxEntry | undefined {
    const known = this.entries.get(id);
    if (known !== undefined) return known;
    const entry = readEntry(this.input.dir, id);
    if (entry.message === null && entry.receipt === null) return undefined;
    this.entries.set(id, entry);
    return entry;
  }

  /** Each ask the stream showed becomes questions/q<n>.json (takeAsks). */
  private recordAsks(): void {
    if (this.state.asks.length === 0) return;
    const wallMs = this.input.wallNow().getTime();
    const taken = takeAsks(this.state, this.questions.read(), this.input.settings.onQuestion, wallMs);
    this.state = taken.state;
    this.questions.write(taken.questions);
  }
}
