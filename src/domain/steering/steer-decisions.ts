import type { SteerSettings } from "../schemas.js";
import type { AskFact, LineFacts } from "../watch/facts.js";
import type { SteerSignals } from "../watch/watch.js";
import { type MessageState, undeliveredWhy } from "./inbox.js";
import { type OnQuestion, type QuestionFile, questionId } from "./questions.js";

// The supervisor's decisions in a steerable dispatch's conversation (specs/steering.md, "The seam"):
// which message goes to the CLI next and when, when one counts delivered, acted or failed, when a turn is
// interrupted, what the CLI's asks become, when the conversation is over (what a question's policy
// answers and when: questionStep, questions.ts). Pure functions
// of (state, facts, now): `now` is the loop's monotonic clock, `wallMs` the wall clock (questions/ tells
// people its times on it). Messages are named by their ids: no file, no channel and no wire format here —
// supervisor/steering.ts reads the folder into facts and carries out the actions, and the backend's
// protocol (SteerProtocol) makes each line the CLI reads.

/** The brief's place among the messages: given first, as a message without a file. */
export const BRIEF = "brief";

/** What a conversation is, for its whole life. */
export interface SteerConfig {
  /** `mid-turn`: a message joins the running turn; `turn-end`: it waits for the turn's end. */
  joins: "mid-turn" | "turn-end";
  /** The protocol can ask an idle CLI to end its session; false: it is stopped once its talk is over. */
  canEnd: boolean;
  settings: SteerSettings;
  /** The brief's text, given as the first message (null: a dispatch without one). */
  brief: string | null;
}

export interface SteerState {
  /** The brief was seen taken (or there is none). */
  briefTaken: boolean;
  /** Messages given to the CLI and not yet seen taken, in the order given. */
  given: readonly string[];
  /** Messages taken whose first move the CLI has not made yet. */
  awaitingAct: readonly string[];
  /** A turn runs: something was taken since the last final. */
  turnOpen: boolean;
  /** The request id of an interrupt given whose turn has not ended yet. */
  interrupting: string | null;
  /** Since when an ended turn waits for a message (--keep-open); null: it does not wait. */
  waitingSince: number | null;
  /** Time ended turns spent waiting for messages, in the waits that are over. */
  waitedMs: number;
  /** When the CLI was asked to end its session; null: not yet. */
  endRequestedAt: number | null;
  /** How many questions the dispatch has asked (the last one is `q<asked>`). */
  asked: number;
  /** The asks the stream showed since the last look, not yet written as questions. */
  asks: readonly AskFact[];
}

/** A message of the inbox as the edge read it: `message` null for a file that is not one (`torn`, why). */
export interface InboxItem {
  id: string;
  state: MessageState;
  message: { text: string; interrupt: boolean } | null;
  torn: string | null;
}

/** A move of a message's receipt, made only if the message still stands at `from`. */
export interface MessageMove {
  kind: "move";
  id: string;
  from: MessageState;
  to: "delivered" | "acted" | "failed";
  why?: string;
}

export type SteerAction =
  /** Give the CLI a message (or the brief, id BRIEF); the edge tells `notGiven` if the channel is closed. */
  | { kind: "give"; id: string; text: string; interrupt: boolean }
  /** Stop the running turn: the message given next starts the next one. */
  | { kind: "interrupt"; requestId: string }
  | MessageMove
  /** The turn an interrupt stopped has ended (its final was taken out of the stream). */
  | { kind: "interrupted"; requestId: string }
  /** Ask the idle CLI to end its session: the conversation is over. */
  | { kind: "end-session" };

export interface SteerStep {
  state: SteerState;
  actions: SteerAction[];
}

/**
 * Where a conversation starts: from nothing, for the first supervisor and for an adopter alike. An
 * adopter reads the stream's backlog first: each echo there marks its message taken (`observeLine`), and
 * what the inbox still holds queued is given again — a CLI skips a message it had (specs/steering.md,
 * "Exactly once, nothing lost").
 */
export function initialSteer(brief: string | null, asked: number): SteerState {
  return {
    briefTaken: brief === null,
    given: [],
    awaitingAct: [],
    turnOpen: false,
    interrupting: null,
    waitingSince: null,
    waitedMs: 0,
    endRequestedAt: null,
    asked,
    asks: [],
  };
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

function stopWaiting(state: SteerState, now: number): SteerState {
  if (state.waitingSince === null) return state;
  return { ...state, waitedMs: state.waitedMs + now - state.waitingSince, waitingSince: null };
}

const move = (id: string, from: MessageState, to: MessageMove["to"], why?: string): MessageMove => ({
  kind: "move",
  id,
  from,
  to,
  ...(why === undefined ? {} : { why }),
});

/**
 * One line's facts; `taken` names the message a line's echo is of (`facts.taken` is the uuid it was
 * given with; null: no message this dispatch knows). The facts come back as the watch should judge them:
 * the final of a turn an interrupt stopped is not the dispatch's final (a redirect follows).
 */
export function observeLine(
  state: SteerState,
  facts: LineFacts,
  taken: string | null,
  now: number,
): SteerStep & { facts: LineFacts } {
  if (facts.taken !== undefined) {
    return taken === null ? { state, actions: [], facts } : { ...took(state, taken, now), facts };
  }
  let next = facts.asks === undefined ? state : { ...state, asks: [...state.asks, facts.asks] };
  const actions: SteerAction[] = [];
  if (acts(facts) && next.awaitingAct.length > 0) {
    for (const id of next.awaitingAct) actions.push(move(id, "delivered", "acted"));
    next = { ...next, awaitingAct: [] };
  }
  if (facts.final === undefined) return { state: next, actions, facts };
  if (!next.briefTaken) {
    // The CLI ended before it took the brief (it could not open its session: codex's unknown thread):
    // nothing given will be taken, and the conversation is over; what is still queued fails at the end.
    return { state: { ...next, briefTaken: true, given: [], turnOpen: false }, actions, facts };
  }
  if (next.interrupting !== null) {
    actions.push({ kind: "interrupted", requestId: next.interrupting });
    const { final: _final, error: _error, ...rest } = facts;
    return {
      state: { ...next, interrupting: null },
      actions,
      facts: { ...rest, describe: "turn interrupted" },
    };
  }
  return { state: { ...next, turnOpen: false }, actions, facts };
}

/**
 * The CLI took `id`. What was given before it went first: a CLI that merges queued messages may echo
 * only the last. An echo of one not waiting to be taken (an adopter's backlog; a message the CLI had and
 * was given again, which it echoes again at once) counts for itself alone: what was given after it may
 * not have been read yet.
 */
function took(state: SteerState, id: string, now: number): SteerStep {
  const at = state.given.indexOf(id);
  const taken = at === -1 ? [id] : state.given.slice(0, at + 1);
  let next: SteerState = {
    ...stopWaiting(state, now),
    given: at === -1 ? state.given : state.given.slice(at + 1),
    turnOpen: true,
  };
  const actions: SteerAction[] = [];
  for (const one of taken) {
    if (one === BRIEF) {
      next = { ...next, briefTaken: true };
      continue;
    }
    actions.push(move(one, "queued", "delivered"));
    if (!next.awaitingAct.includes(one)) next = { ...next, awaitingAct: [...next.awaitingAct, one] };
  }
  return { state: next, actions };
}

/**
 * What to give the CLI now, the inbox read in delivery order: the brief first; then each queued message —
 * at once for a CLI that takes messages mid-turn, after the turn for one that does not, at once with an
 * interrupt of the running turn for `--interrupt`. A file that is not a message is failed, saying why.
 */
export function lookInbox(
  state: SteerState,
  config: SteerConfig,
  inbox: readonly InboxItem[],
  now: number,
): SteerStep {
  const actions: SteerAction[] = [];
  let next = state;
  if (!next.briefTaken && !next.given.includes(BRIEF)) {
    next = give(next, actions, { id: BRIEF, text: config.brief ?? "", interrupt: false });
  }
  for (const item of inbox) {
    if (item.state !== "queued" || next.given.includes(item.id)) continue;
    if (item.message === null) {
      actions.push(
        move(item.id, "queued", "failed", `the message file is not a message: ${item.torn ?? "unreadable"}`),
      );
      continue;
    }
    if (!next.briefTaken) continue;
    const { text, interrupt } = item.message;
    if (config.joins === "turn-end" && next.turnOpen && !interrupt) continue;
    next = give(stopWaiting(next, now), actions, { id: item.id, text, interrupt });
  }
  return { state: next, actions };
}

/** Gives a message; a running turn is interrupted first for one sent with `--interrupt`. */
function give(
  state: SteerState,
  actions: SteerAction[],
  message: { id: string; text: string; interrupt: boolean },
): SteerState {
  const { id, interrupt } = message;
  let next = state;
  if (interrupt && state.turnOpen) {
    next = { ...next, interrupting: `interrupt-${id}` };
    actions.push({ kind: "interrupt", requestId: `interrupt-${id}` });
  }
  actions.push({ kind: "give", ...message });
  return { ...next, given: [...next.given, id] };
}

/** The channel was closed when `id` was given: it was not, and is given again at a later look. */
export function notGiven(state: SteerState, id: string): SteerState {
  return { ...state, given: state.given.filter((g) => g !== id) };
}

/** A question to write, and whether someone is to answer it (the dispatch's --notify runs for it then). */
export interface NewQuestion {
  question: Omit<QuestionFile, "schema">;
  notify: boolean;
}

/**
 * The asks the stream showed since the last look, as questions q<n> in the order asked; an ask seen
 * again (an adopter reading the backlog) is the question already written (`known`: questions/ as read).
 * Each is answered by `answerBy`: at once for `allow` and `deny`, after the wait for `wait`.
 */
export function takeAsks(
  state: SteerState,
  known: readonly { question: { request: Readonly<Record<string, unknown>> } }[],
  onQuestion: OnQuestion | null,
  wallMs: number,
): { state: SteerState; questions: NewQuestion[] } {
  const requests = new Set(known.map((q) => JSON.stringify(q.question.request)));
  const waitMs = onQuestion?.policy === "wait" ? onQuestion.waitMs : 0;
  const questions: NewQuestion[] = [];
  let asked = state.asked;
  for (const ask of state.asks) {
    const key = JSON.stringify(ask.request);
    if (requests.has(key)) continue;
    requests.add(key);
    const question = {
      id: questionId(++asked),
      kind: ask.kind,
      asks: ask.asks,
      tool: ask.tool,
      input: ask.input,
      askedAt: new Date(wallMs).toISOString(),
      answerBy: new Date(wallMs + waitMs).toISOString(),
      request: ask.request,
    };
    questions.push({ question, notify: waitMs > 0 });
  }
  return { state: { ...state, asked, asks: [] }, questions };
}

/** What the edge knows at the rules' look, besides the state. */
export interface SteerWorld {
  /** A message was queued as the last look read the inbox (moves since included). */
  queued: boolean;
  /** Part of a line waits in the channel for the CLI to read it. */
  pending: boolean;
  /** When the first open question is answered by its policy (wall ms); null: none is open. */
  questionDue: number | null;
  wallMs: number;
}

/**
 * Where the conversation stands for the watch's rules (watch.ts, SteerSignals). A turn has ended with
 * nothing held — no message queued, given and not taken, taken and not acted on, no question open — and
 * with --keep-open it waits that long for a message; once over, a CLI that can be asked is asked to end
 * its session, once.
 */
export function steerSignals(
  state: SteerState,
  config: SteerConfig,
  world: SteerWorld,
  now: number,
): SteerStep & { signals: SteerSignals } {
  const { keepOpenMs } = config.settings;
  const held = state.given.length > 0 || state.awaitingAct.length > 0 || world.pending || world.queued;
  const asking = world.questionDue !== null;
  const ended = state.briefTaken && !state.turnOpen && !held && !asking;
  let next = state;
  if (ended && next.waitingSince === null && keepOpenMs !== null) next = { ...next, waitingSince: now };
  const over = ended && (next.waitingSince === null || now - next.waitingSince >= (keepOpenMs ?? 0));
  const actions: SteerAction[] = [];
  if (over && next.endRequestedAt === null && config.canEnd) {
    next = { ...next, endRequestedAt: now };
    actions.push({ kind: "end-session" });
  }
  const due = world.questionDue;
  const signals: SteerSignals = {
    ended,
    asking,
    waitingSince: ended ? next.waitingSince : null,
    waitedMs: next.waitedMs,
    keepOpenMs,
    // The policy's deadline is on the wall clock (questions/ says it to people): placed on the loop's.
    questionDueAt: due === null ? null : now + Math.max(0, due - world.wallMs),
    ...(config.canEnd ? { endRequestedAt: next.endRequestedAt } : {}),
  };
  return { state: next, actions, signals };
}

/** How long ended turns waited for a message, in all (the record's `keptOpenMs`). */
export function keptOpenMs(state: SteerState, now: number): number {
  return state.waitedMs + (state.waitingSince === null ? 0 : now - state.waitingSince);
}

/** The dispatch ends: what was not delivered never will be. */
export function undelivered(inbox: readonly InboxItem[], cancelled: boolean): MessageMove[] {
  const why = undeliveredWhy(cancelled);
  return inbox
    .filter((item) => item.state === "queued")
    .map((item) => move(item.id, "queued", "failed", why));
}
