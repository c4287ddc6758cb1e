import type { LineFacts } from "../domain/watch/facts.js";
import { THREAD_REQUEST } from "./codex-app-server.js";
import { asRecord, asString, parseObject } from "./line-parsing.js";
import { rpcProbe } from "./rpc-probe.js";
import type { AskAnswer, PlanRequest, SessionStart, SteerProtocol, SteerSession } from "./types.js";

// A steerable codex dispatch runs `codex app-server` (specs/steering.md, "Which backends"; the wire
// format: codex-app-server.ts). The session is catherd's client of it: `initialize` and `initialized`,
// `thread/start` (or `thread/resume` for a follow-up's thread), then each message is a `turn/start` between
// turns or a `turn/steer` aimed at the running turn by its id (`expectedTurnId`, required since 0.99);
// `clientUserMessageId` is catherd's uuid of the message, and the userMessage item that echoes it is the
// message's `delivered` receipt. codex dedupes nothing: a message it accepted (its answer to catherd's
// request, in the stream) is never written again, by this supervisor or an adopter.

/** The environment variables that carry a follow-up's thread and the approval policy from the plan to the session. */
export const RESUME_ENV = "CATHERD_CODEX_THREAD";
export const APPROVAL_ENV = "CATHERD_CODEX_APPROVAL";
/** --answer-schema's schema, for turn/start's `outputSchema` (at most 64 KiB: within one variable's limit). */
export const SCHEMA_ENV = "CATHERD_CODEX_OUTPUT_SCHEMA";

const SANDBOX = {
  "read-only": "read-only",
  "workspace-write": "workspace-write",
  full: "danger-full-access",
} as const;

/**
 * `codex app-server` with the dispatch's settings as config overrides (thread/start then takes them as
 * the thread's): the sandbox of the access level (none inside catherd's sandbox, which enforces it), and
 * the approval policy — `untrusted` (a command not known safe asks) when catherd takes questions, else
 * `never` (nothing blocks an unattended run). read-only with questions stays `never`: a policy must not
 * widen read-only. codex 0.171 refuses `untrusted` in its config ("no longer supported") and takes it in
 * thread/start's `approvalPolicy`: the session passes it there. No `--listen`: stdio is the default, and
 * `ws://` would stop it (specs/backends.md).
 */
export function appServerPlan(request: PlanRequest, questions: boolean) {
  const args = ["app-server"];
  const sandbox =
    request.sandboxed === true ? "danger-full-access" : request.access && SANDBOX[request.access];
  if (sandbox != null) args.push("-c", `sandbox_mode=${JSON.stringify(sandbox)}`);
  const asks = questions && request.access !== "read-only" && request.access !== "full";
  if (!asks) args.push("-c", 'approval_policy="never"');
  if (request.model !== null) args.push("-c", `model=${JSON.stringify(request.model)}`);
  if (request.effort !== null) args.push("-c", `model_reasoning_effort=${JSON.stringify(request.effort)}`);
  args.push(...request.extraArgs);
  const env: Record<string, string> = {};
  if (request.thread !== null) env[RESUME_ENV] = request.thread;
  if (asks) env[APPROVAL_ENV] = "untrusted";
  if (request.answerSchema != null) env[SCHEMA_ENV] = request.answerSchema.text;
  return { cmd: request.bin, args, env, stdin: "channel" as const };
}

const CLIENT_INFO = { name: "catherd", title: "catherd", version: "1" };
const request = (id: string, method: string, params: unknown) => JSON.stringify({ method, id, params });
const textInput = (text: string) => [{ type: "text", text, text_elements: [] }];

/** catherd's request ids: what it asked for, and the message (its uuid) a start or a steer carries. */
const START = "start:";
const STEER = "steer:";
/** The opening's `initialize`: an answer to it (ok, or "Already initialized") says the opening was read. */
const INITIALIZE = "initialize";
/** An adopter's probe, `probe:<adoption>`: one per supervisor, so an earlier one's answer is not its own. */
const PROBE = "probe:";

/** What the session starts from (codexSteer.session reads it from the plan's environment). */
export interface CodexStart {
  resume: string | null;
  approval: string | null;
  outputSchema?: unknown;
  /** 0 for the dispatch's first supervisor; n for its n-th adopter, which probes before it writes. */
  adoption?: number;
}

/**
 * One dispatch's conversation with its app-server; its state from the stream's facts and its own writes.
 * A message the session cannot give yet (no thread; a turn being started or interrupted; an adopter's
 * probe not answered) waits in it, in the order given, and goes at a later look (`due`).
 *
 * Exactly once through a supervisor's death (specs/steering.md, "codex: what an adopter may conclude"):
 * codex reads its input in order, answers each `initialize` in that order, and answers the requests of a
 * thread (turn/start, turn/steer, thread/read…) one after another. So the opening is written in one write
 * (initialize, initialized, thread/start: read whole or not at all), and an adopter that cannot see what
 * its predecessor wrote asks first: without a thread, a probe `initialize` (its answer comes after the
 * opening's, if that was written); with one, a probe `thread/read` (its answer comes after those of every
 * start and steer written before it). Until the probe's answer, it writes nothing else.
 */
export class CodexSession implements SteerSession {
  private thread: string | null = null;
  /** The opening was written here, or an earlier one was seen read: its thread will come. */
  private opened = false;
  /** An answer to the opening's `initialize` was seen (an earlier supervisor's opening was read). */
  private openingRead = false;
  /** This supervisor's probe, once written; `answered` once its answer was seen. */
  private probe: { answered: boolean } | null = null;
  private turn: { id: string; running: boolean } | null = null;
  /** A turn/start was written and its turn is not seen yet: a message now would start another. */
  private starting = false;
  /** An interrupt was written and its turn has not ended: a message now would steer a dying turn. */
  private stopping = false;
  /** Each message's text by uuid, in the order given; those codex took (answered ok) are never written again. */
  private readonly texts = new Map<string, string>();
  private readonly accepted = new Set<string>();
  /** Messages given and not written yet, or whose steer codex refused (the turn ended meanwhile). */
  private waiting: string[] = [];
  /** Messages whose turn/steer this session wrote and codex has not answered yet. */
  private readonly steering = new Set<string>();
  private readonly probeId: string;

  constructor(private readonly start: CodexStart) {
    this.probeId = `${PROBE}${start.adoption ?? 0}`;
  }

  observe(facts: LineFacts): undefined {
    if (facts.thread !== undefined && this.thread === null) this.thread = facts.thread;
    if (facts.turn !== undefined) this.seeTurn(facts.turn);
    if (facts.answered !== undefined) this.seeAnswer(facts.answered);
    return undefined;
  }

  due(): string[] {
    return [...this.opening(), ...this.flush()];
  }

  userLines(text: string, uuid: string): string[] {
    if (this.accepted.has(uuid) || this.waiting.includes(uuid)) return [];
    if (!this.texts.has(uuid)) this.texts.set(uuid, text);
    this.waiting.push(uuid);
    return this.flush();
  }

  interruptLines(requestId: string): string[] {
    if (this.thread === null || this.turn?.running !== true) return [];
    this.stopping = true;
    return [request(requestId, "turn/interrupt", { threadId: this.thread, turnId: this.turn.id })];
  }

  /**
   * What opens the conversation, at a look: the opening, once; for an adopter, first the probe that says
   * whether its predecessor's writes were read.
   */
  private opening(): string[] {
    if (this.probe === null && (this.start.adoption ?? 0) > 0) return [this.writeProbe()];
    if (this.opened || this.thread !== null || this.probe?.answered === false) return [];
    this.opened = true;
    if (this.openingRead) return [];
    const { resume, approval } = this.start;
    const policy = approval === null ? {} : { approvalPolicy: approval };
    const open =
      resume === null
        ? request(THREAD_REQUEST, "thread/start", policy)
        : request(THREAD_REQUEST, "thread/resume", { threadId: resume, ...policy });
    const init = request(INITIALIZE, "initialize", { clientInfo: CLIENT_INFO, capabilities: null });
    // One write of at most a few hundred bytes (under PIPE_BUF) into a channel that has room: read whole.
    return [[init, JSON.stringify({ method: "initialized" }), open].join("\n")];
  }

  /**
   * With a thread, `thread/read` (queued behind its starts and steers); without, `initialize`. It starts
   * with a newline: a line the dead supervisor left torn becomes one codex skips (it skips a line that is
   * not JSON, an empty one too), and the torn message, unanswered, is given again.
   */
  private writeProbe(): string {
    this.probe = { answered: false };
    const line =
      this.thread === null
        ? request(this.probeId, "initialize", { clientInfo: CLIENT_INFO, capabilities: null })
        : request(this.probeId, "thread/read", { threadId: this.thread });
    return `\n${line}`;
  }

  /** The waiting messages that can go now, in order: a turn/start, then steers of that turn once seen. */
  private flush(): string[] {
    const lines: string[] = [];
    for (let line = this.next(); line !== null; line = this.next()) lines.push(line);
    return lines;
  }

  private next(): string | null {
    this.waiting = this.waiting.filter((uuid) => !this.accepted.has(uuid));
    const uuid = this.waiting[0];
    const { thread, turn } = this;
    if (uuid === undefined || thread === null || this.stopping || this.starting) return null;
    if (this.probe?.answered === false) return null;
    const running = turn?.running === true;
    // A steer not answered yet may be refused (its turn ended): it goes again before anything given after it.
    if (!running && this.steering.size > 0) return null;
    this.waiting.shift();
    const input = textInput(this.texts.get(uuid) ?? "");
    if (running) {
      this.steering.add(uuid);
      const params = { threadId: thread, input, clientUserMessageId: uuid, expectedTurnId: turn.id };
      return request(`${STEER}${uuid}`, "turn/steer", params);
    }
    this.starting = true;
    const schema = this.start.outputSchema === undefined ? {} : { outputSchema: this.start.outputSchema };
    const params = { threadId: thread, input, clientUserMessageId: uuid, ...schema };
    return request(`${START}${uuid}`, "turn/start", params);
  }

  private seeTurn(turn: { id: string; running: boolean }): void {
    if (turn.running) {
      this.starting = false;
      this.turn = turn;
    } else if (this.turn === null || this.turn.id === turn.id) {
      this.stopping = false;
      this.turn = turn;
    }
  }

  private seeAnswer(answered: { id: string; ok: boolean }): void {
    const { id, ok } = answered;
    if (id === INITIALIZE) this.openingRead = true;
    if (id === this.probeId && this.probe !== null) this.probe.answered = true;
    const steer = id.startsWith(STEER);
    if (!steer && !id.startsWith(START)) return;
    const uuid = id.slice(steer ? STEER.length : START.length);
    if (steer) this.steering.delete(uuid);
    if (ok) {
      this.accepted.add(uuid);
      return;
    }
    if (!steer) this.starting = false;
    // Only a refused steer of a message this supervisor was given is given again (an adopter's backlog holds
    // others'), back in its place among those waiting: messages go in the order given.
    if (steer && this.texts.has(uuid) && !this.waiting.includes(uuid)) this.requeue(uuid);
  }

  private requeue(uuid: string): void {
    const order = [...this.texts.keys()];
    this.waiting = [...this.waiting, uuid].sort((a, b) => order.indexOf(a) - order.indexOf(b));
  }
}

/**
 * An answer to the server's request, with the decisions it offers: a command or a file change `accept` or
 * `decline`; a question its text as the answer to its first question (a JSON object of question id → text
 * answers several), none when declined.
 */
export function responseLine(
  req: Readonly<Record<string, unknown>>,
  input: unknown,
  answer: AskAnswer,
): string {
  if (req.method === "item/tool/requestUserInput") {
    return JSON.stringify({
      id: req.id,
      result: { answers: answer.allow ? userAnswers(input, answer.text) : {} },
    });
  }
  return JSON.stringify({ id: req.id, result: { decision: answer.allow ? "accept" : "decline" } });
}

function userAnswers(input: unknown, text: string | null): Record<string, { answers: string[] }> {
  const given = parseObject(text ?? "");
  if (given !== null && Object.values(given).every((v) => typeof v === "string")) {
    return Object.fromEntries(Object.entries(given).map(([id, v]) => [id, { answers: [v as string] }]));
  }
  const questions = Array.isArray(asRecord(input)?.questions)
    ? (asRecord(input)?.questions as unknown[])
    : [];
  const first = asString(asRecord(questions[0])?.id) ?? "answer";
  return { [first]: { answers: [text ?? ""] } };
}

/**
 * codex over its app-server: messages join the running turn (`turn/steer`). No end line: its own stdin
 * (the channel, which it holds open itself) never ends, so the supervisor stops it once the conversation
 * is over (specs/steering.md, "The channel").
 */
export const codexSteer: SteerProtocol = {
  joins: "mid-turn",
  session: (start: SessionStart) => {
    const schema = parseObject(start.env[SCHEMA_ENV] ?? "");
    return new CodexSession({
      resume: start.env[RESUME_ENV] ?? null,
      approval: start.env[APPROVAL_ENV] ?? null,
      ...(schema === null ? {} : { outputSchema: schema }),
      adoption: start.adoption ?? 0,
    });
  },
  responseLine,
  probe: rpcProbe("codex app-server", ["app-server"], {
    method: "initialize",
    params: { clientInfo: CLIENT_INFO, capabilities: null },
  }),
};
