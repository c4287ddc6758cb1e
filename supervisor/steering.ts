import { createHash } from "node:crypto";
import type { SteerProtocol } from "../src/backends/types.js";
import type { AskFact, LineFacts } from "../src/domain/facts.js";
import { isOpen, undeliveredWhy } from "../src/domain/inbox.js";
import { answerAsGiven, policyAnswer, questionId } from "../src/domain/questions.js";
import type { SteerSettings } from "../src/domain/schemas.js";
import type { SteerSignals } from "../src/domain/watch.js";
import { type InboxEntry, messageIds, moveMessage, readEntry } from "../src/folder/inbox.js";
import { notifyQuestion } from "../src/folder/notify.js";
import {
  markAnswerDelivered,
  type QuestionEntry,
  questionIds,
  readQuestion,
  writeAnswer,
  writeQuestion,
} from "../src/folder/questions.js";
import { ChannelWriter } from "./channel.js";
import type { SupervisorLog } from "./log.js";
import { pauseAt } from "./test-hooks.js";

// The supervisor's side of talking to a running agent (specs/steering.md): it gives the CLI the brief and
// then each message of inbox/ over the channel, moves each message on as the stream shows the CLI took it
// and acted on it, turns the CLI's asks into questions/, and gives each its one answer.
//
// Exactly once: a message goes to the CLI with a uuid made from the dispatch and the message, and the CLI
// skips a uuid it has seen. A supervisor that dies after writing and before the echo leaves the message
// `queued`; its adopter reads the whole stream first (a echo there marks it delivered) and writes again
// what is still queued, which the CLI skips if it had it.

/** The brief's place among the messages: delivered first, as a message without a file. */
const BRIEF = "brief";

export interface SteeringInput {
  dir: string;
  dispatchId: string;
  protocol: SteerProtocol;
  settings: SteerSettings;
  /** The brief's text, given as the first message (null: a dispatch without one). */
  brief: string | null;
  /** The channel's path (the FIFO the agent reads). */
  channel: string;
  log: SupervisorLog;
  wallNow: () => Date;
}

export class Steering {
  private readonly writer: ChannelWriter;
  /** uuid → message id, for what was written and not yet seen taken. */
  private readonly written = new Map<string, string>();
  /** Ids taken whose first move the CLI has not made yet. */
  private readonly awaitingAct = new Set<string>();
  /** The brief was seen taken (or there is none). */
  private briefTaken: boolean;
  /** A turn runs: something was taken since the last final. */
  private turnOpen = false;
  /** The request id of an interrupt written whose turn has not ended yet. */
  private interrupting: string | null = null;
  /** Since when an ended turn waits for a message (--keep-open); null: it does not wait. */
  private waitingSince: number | null = null;
  private waitedMs = 0;
  /** When the CLI was asked to end its session (the conversation over); null: not yet. */
  private endRequestedAt: number | null = null;
  private asked: number;
  private readonly askedNow: AskFact[] = [];
  /** The inbox as last read: an entry that can no longer change (acted, failed) is not read again. */
  private readonly entries = new Map<string, InboxEntry>();
  /** The questions whose answer was given: they can no longer change. */
  private readonly settled = new Map<string, QuestionEntry>();
  /**
   * When the first question still waiting for its answer (as the last look left them) is answered by
   * its policy, on the wall clock; null: none waits. What `signals` reads: inbox/ and questions/ are read
   * once a poll, in `look`.
   */
  private questionDue: number | null = null;

  constructor(private readonly input: SteeringInput) {
    this.writer = new ChannelWriter(input.channel);
    this.briefTaken = input.brief === null;
    this.asked = questionIds(input.dir).length;
  }

  /** The uuid a message goes to the CLI with: the same for every supervisor of the dispatch. */
  uuidOf(id: string): string {
    const hex = createHash("sha256").update(`${this.input.dispatchId}/${id}`).digest("hex");
    const variant = ((Number.parseInt(hex[16] ?? "0", 16) & 0x3) | 0x8).toString(16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }

  /**
   * One line's facts, as the watch should see them: the final of a turn an interrupt stopped is not the
   * dispatch's final (a redirect follows), so it is taken out.
   */
  observe(facts: LineFacts, now: number): LineFacts {
    if (facts.taken !== undefined) {
      this.took(facts.taken, now);
      return facts;
    }
    if (facts.asks !== undefined) this.askedNow.push(facts.asks);
    if (acts(facts)) this.acted();
    if (facts.final === undefined) return facts;
    if (this.interrupting !== null) {
      this.input.log("interrupted", { requestId: this.interrupting });
      this.interrupting = null;
      const { final: _final, error: _error, ...rest } = facts;
      return { ...rest, describe: "turn interrupted" };
    }
    this.turnOpen = false;
    return facts;
  }

  /**
   * Gives the CLI what is due: the brief, then the queued messages in order (at once for a CLI that takes
   * them mid-turn, after the turn for one that does not); asks written as questions; answers given.
   */
  look(now: number): void {
    this.writer.flush();
    this.recordAsks();
    if (!this.briefTaken && !this.isWritten(BRIEF)) {
      this.send(BRIEF, this.input.brief ?? "", false);
    }
    for (const entry of this.inbox()) this.consider(entry, now);
    this.answerQuestions();
  }

  /** What the watch's rules need to know (watch.ts, SteerSignals). */
  signals(now: number): SteerSignals {
    const held = this.holding();
    const asking = this.questionDue !== null;
    const ended = this.briefTaken && !this.turnOpen && !held && !asking;
    if (ended && this.waitingSince === null && this.input.settings.keepOpenMs !== null)
      this.waitingSince = now;
    const due = this.questionDue;
    const over =
      ended &&
      (this.waitingSince === null || now - this.waitingSince >= (this.input.settings.keepOpenMs ?? 0));
    if (over && this.endRequestedAt === null && this.input.protocol.endLine !== undefined) {
      this.writer.write(this.input.protocol.endLine("end-session"));
      this.endRequestedAt = now;
      this.input.log("end-session", {});
    }
    return {
      ended,
      asking,
      waitingSince: ended ? this.waitingSince : null,
      waitedMs: this.waitedMs,
      keepOpenMs: this.input.settings.keepOpenMs,
      // The policy's deadline is on the wall clock (questions/ says it to people): placed on the loop's.
      questionDueAt: due === null ? null : now + Math.max(0, due - this.input.wallNow().getTime()),
      ...(this.input.protocol.endLine === undefined ? {} : { endRequestedAt: this.endRequestedAt }),
    };
  }

  /** How long ended turns waited for a message, in all (the record's `keptOpenMs`). */
  keptOpenMs(now: number): number {
    return this.waitedMs + (this.waitingSince === null ? 0 : now - this.waitingSince);
  }

  /** The dispatch ends: what was not delivered never will be. */
  end(cancelled: boolean): void {
    const why = undeliveredWhy(cancelled);
    for (const entry of this.inbox()) {
      if (entry.state !== "queued") continue;
      this.move(entry, "failed", why);
    }
    this.writer.close();
  }

  private consider(entry: InboxEntry, now: number): void {
    if (entry.state !== "queued") return;
    if (entry.message === null) {
      this.move(entry, "failed", `the message file is not a message: ${entry.torn ?? "unreadable"}`);
      return;
    }
    if (this.isWritten(entry.id)) return;
    // The brief first; a CLI that takes nothing mid-turn gets the message when the turn has ended.
    if (!this.briefTaken) return;
    if (this.input.protocol.joins === "turn-end" && this.turnOpen && !entry.message.interrupt) return;
    this.stopWaiting(now);
    this.send(entry.id, entry.message.text, entry.message.interrupt);
  }

  private send(id: string, text: string, interrupt: boolean): void {
    const { protocol, log } = this.input;
    if (interrupt && this.turnOpen) {
      this.interrupting = `interrupt-${id}`;
      this.writer.write(protocol.interruptLine(this.interrupting));
    }
    const uuid = this.uuidOf(id);
    const result = this.writer.write(protocol.userLine(text, uuid));
    if (result === "closed") {
      log("channel-closed", { message: id });
      return;
    }
    this.written.set(uuid, id);
    log("message-written", {
      message: id,
      uuid,
      interrupt,
      ...(result === "pending" ? { pending: true } : {}),
    });
    if (id !== BRIEF) pauseAt("message-written", this.input.dir);
  }

  private took(uuid: string, now: number): void {
    const id = this.written.get(uuid) ?? (uuid === this.uuidOf(BRIEF) ? BRIEF : this.idOfUuid(uuid));
    if (id === null) return;
    // What was written before it went first: a CLI that merges queued messages may echo only the last.
    for (const [earlier, earlierId] of this.written) {
      if (earlier === uuid) break;
      this.written.delete(earlier);
      this.markTaken(earlierId);
    }
    this.written.delete(uuid);
    this.turnOpen = true;
    this.stopWaiting(now);
    this.markTaken(id);
  }

  private markTaken(id: string): void {
    if (id === BRIEF) {
      this.briefTaken = true;
      return;
    }
    const entry = this.entryOf(id);
    if (entry?.state === "queued") this.move(entry, "delivered");
    this.awaitingAct.add(id);
  }

  /** A uuid the stream shows that this supervisor did not write (an adopter reading the backlog). */
  private idOfUuid(uuid: string): string | null {
    return messageIds(this.input.dir).find((id) => this.uuidOf(id) === uuid) ?? null;
  }

  private acted(): void {
    if (this.awaitingAct.size === 0) return;
    for (const id of this.awaitingAct) {
      const entry = this.entryOf(id);
      if (entry?.state === "delivered") this.move(entry, "acted");
    }
    this.awaitingAct.clear();
  }

  private holding(): boolean {
    if (this.written.size > 0 || this.awaitingAct.size > 0 || this.writer.hasPending) return true;
    // As the last look read the inbox (moves since then are in it too).
    for (const entry of this.entries.values()) if (entry.state === "queued") return true;
    return false;
  }

  private isWritten(id: string): boolean {
    for (const written of this.written.values()) if (written === id) return true;
    return false;
  }

  private stopWaiting(now: number): void {
    if (this.waitingSince === null) return;
    this.waitedMs += now - this.waitingSince;
    this.waitingSince = null;
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

  /** The questions in the order asked; one whose answer was given is not read again. */
  private questions(): QuestionEntry[] {
    const all = readQuestionsExcept(this.input.dir, this.settled);
    for (const q of all) if (q.deliveredAt !== null) this.settled.set(q.question.id, q);
    return all;
  }

  private move(entry: InboxEntry, to: "delivered" | "acted" | "failed", why?: string): void {
    const moved = moveMessage(this.input.dir, entry, to, this.input.wallNow(), why);
    if (moved !== null) this.entries.set(entry.id, { ...entry, receipt: moved, state: moved.state });
    if (moved !== null)
      this.input.log("message", { id: entry.id, state: to, ...(why === undefined ? {} : { why }) });
  }

  /** Each ask the stream showed becomes questions/q<n>.json; a policy that answers at once answers it. */
  private recordAsks(): void {
    const { dir, settings, log, wallNow } = this.input;
    const onQuestion = settings.onQuestion;
    for (const ask of this.askedNow.splice(0)) {
      if (this.knownRequest(ask)) continue;
      const id = questionId(++this.asked);
      const at = wallNow();
      const waitMs = onQuestion?.policy === "wait" ? onQuestion.waitMs : 0;
      writeQuestion(dir, {
        id,
        kind: ask.kind,
        asks: ask.asks,
        tool: ask.tool,
        input: ask.input,
        askedAt: at.toISOString(),
        answerBy: new Date(at.getTime() + waitMs).toISOString(),
        request: ask.request,
      });
      log("question", { id, kind: ask.kind, asks: ask.asks });
      // Someone is to answer: the dispatch's --notify runs now, once, with CATHERD_STATUS=question (a
      // policy that answers at once needs nobody).
      if (waitMs > 0) notifyQuestion(dir, id);
    }
  }

  /** An ask seen again (an adopter reading the backlog) is the question already written. */
  private knownRequest(ask: AskFact): boolean {
    const key = JSON.stringify(ask.request);
    return this.questions().some((q) => JSON.stringify(q.question.request) === key);
  }

  /** The open question answered first; a policy's answer for one whose wait is over. */
  private answerQuestions(): void {
    const { dir, settings, protocol, log, wallNow } = this.input;
    let due: number | null = null;
    for (const entry of this.questions()) {
      if (entry.deliveredAt !== null) continue;
      let answer = entry.answer;
      const now = wallNow();
      if (
        answer === null &&
        settings.onQuestion !== null &&
        Date.parse(entry.question.answerBy) <= now.getTime()
      ) {
        writeAnswer(dir, policyAnswer(settings.onQuestion, entry.question.id, now.toISOString()));
        // The first answer stands: a person's that came first, else the policy's.
        answer = readQuestion(dir, entry.question.id)?.answer ?? null;
      }
      const waitsUntil = Date.parse(entry.question.answerBy);
      if (answer === null) {
        due = due === null ? waitsUntil : Math.min(due, waitsUntil);
        continue;
      }
      // What reaches the CLI is what the answer says for its question: a text to a permission denies it.
      answer = answerAsGiven(entry.question.kind, answer);
      const line = protocol.answerLine(entry.question.request, entry.question.input, answer);
      if (this.writer.write(line) === "closed") {
        log("channel-closed", { question: entry.question.id });
        due = due === null ? waitsUntil : Math.min(due, waitsUntil);
        continue;
      }
      markAnswerDelivered(dir, entry.question.id, now);
      log("answered", { id: entry.question.id, allow: answer.allow, by: answer.by });
    }
    this.questionDue = due;
  }
}

/** The questions of `dir`, those in `settled` as they were (they no longer change). */
function readQuestionsExcept(dir: string, settled: ReadonlyMap<string, QuestionEntry>): QuestionEntry[] {
  return questionIds(dir).flatMap((id) => {
    const known = settled.get(id) ?? readQuestion(dir, id);
    return known === null ? [] : [known];
  });
}

/** A line that shows the CLI working on what it took: a model's words, a tool call, a usage report, an end. */
function acts(facts: LineFacts): boolean {
  return (
    facts.reply !== undefined ||
    facts.toolsOpened !== undefined ||
    facts.final !== undefined ||
    facts.usage !== undefined
  );
}
