import type { LineFacts } from "../domain/watch/facts.js";
import { ACP_IDS, ECHO_METHOD } from "./gemini-acp.js";
import { asRecord, asString } from "./line-parsing.js";
import { rpcProbe } from "./rpc-probe.js";
import type { AskAnswer, PlanRequest, SessionStart, SteerProtocol, SteerSession } from "./types.js";

// A steerable gemini dispatch runs `gemini --acp` (specs/steering.md, "Which backends"; the wire format:
// gemini-acp.ts). The session is catherd's client of it: `initialize`, then `session/new` (`session/load`
// for a follow-up's thread, by its load key: loadKey), then each message is a `session/prompt` between turns — ACP has no mid-turn
// input, and a second prompt during one cancels the running turn (its tool's result never reaches the
// model), so a message given mid-turn waits here for the turn's end. gemini echoes no prompt: right after
// each prompt, in the same write, catherd writes an echo request (`_catherd/echo`, a method gemini does not
// have), and gemini's refusal of it — answered at once, in the order it read them — is the message's
// `delivered` receipt.
// Request ids name the message (`prompt:<uuid>`, `taken:<uuid>`): a message whose echo or end is in the
// stream is never written again, by this supervisor or an adopter, since gemini dedupes nothing.

/** The environment variables that carry a follow-up's thread and whether catherd takes the asks. */
export const RESUME_ENV = "CATHERD_GEMINI_THREAD";
export const ASKS_ENV = "CATHERD_GEMINI_ASKS";

/** --approval-mode of each access level (gemini.ts says why each). */
export const APPROVAL_FLAGS = {
  "read-only": ["--approval-mode", "default"],
  "workspace-write": ["--approval-mode", "auto_edit"],
  full: ["--approval-mode", "yolo"],
} as const;

/**
 * `gemini --acp` with the dispatch's model and approval mode. Over ACP gemini asks its client what
 * headless gemini denies: catherd takes those asks as questions with `--on-question` (without a level, or
 * with workspace-write), and denies them at once otherwise — as `-p` does, and because a policy must not
 * widen read-only (`full` asks nothing). --skip-trust as for `-p`.
 */
export function acpPlan(request: PlanRequest, questions: boolean) {
  const args = ["--acp", "--skip-trust"];
  if (request.access !== null) args.push(...APPROVAL_FLAGS[request.access]);
  if (request.model !== null) args.push("--model", request.model);
  args.push(...request.extraArgs);
  const env: Record<string, string> = {};
  if (request.thread !== null) env[RESUME_ENV] = request.thread;
  if (questions && request.access !== "read-only" && request.access !== "full") env[ASKS_ENV] = "1";
  return { cmd: request.bin, args, env, stdin: "channel" as const };
}

/**
 * The id a follow-up's `session/load` names its thread by: the thread led by a space. gemini 0.61.0 finds
 * the session to load by the id trimmed, but first opens a fresh record under the id as given, named by the
 * minute and its first 8 characters: under the bare id, in the minute the session began, that is the
 * session's own file, whose history it wipes before it looks ("No previous sessions found"). Led by a
 * space the fresh record is another file, the history loads, and gemini keys the loaded session by the id
 * as given: every prompt and cancel of it names the same key (specs/backends.md, "gemini 0.61.0").
 */
export const loadKey = (thread: string) => ` ${thread}`;

const rpc = (message: Record<string, unknown>) => JSON.stringify({ jsonrpc: "2.0", ...message });
const request = (id: string, method: string, params: unknown) => rpc({ id, method, params });

/** The answer to a permission ask: the option of `kind` it offers, else "cancelled" (it runs nothing). */
function permissionAnswer(id: unknown, input: unknown, kinds: readonly string[]): string {
  const options = Array.isArray(asRecord(input)?.options) ? (asRecord(input)?.options as unknown[]) : [];
  const chosen = kinds
    .map((kind) => options.map(asRecord).find((o) => o?.kind === kind))
    .find((o) => o !== undefined);
  const optionId = asString(chosen?.optionId);
  const outcome = optionId === null ? { outcome: "cancelled" } : { outcome: "selected", optionId };
  return rpc({ id, result: { outcome } });
}

const ALLOW = ["allow_once", "allow_always"] as const;
const REJECT = ["reject_once", "reject_always"] as const;

/** What the session starts from (geminiSteer.session reads it from the plan's environment). */
export interface GeminiStart {
  resume: string | null;
  asks: boolean;
  cwd: string;
  /** 0 for the dispatch's first supervisor; n for its n-th adopter, which probes before it writes. */
  adoption?: number;
}

/**
 * One dispatch's conversation with `gemini --acp`; its state from the stream's facts and its own writes.
 * A message given while a prompt runs (or before the session is open, or an adopter's probe is answered)
 * waits in it, in the order given.
 *
 * Exactly once through a supervisor's death (specs/steering.md, "gemini: what an adopter may conclude"):
 * gemini reads its input in order and refuses an echo request as it reads it, so each write ends in an
 * echo request — the opening (initialize, session/new or load, echo `opened`) and each message (its
 * prompt, its echo) are one write each — and an adopter asks first: its probe, an echo request of its
 * own, is refused after every line written before it was read. Until then it writes nothing else; then a
 * message whose echo came is taken, and one without is given again; no opening echo, no opening written.
 */
export class GeminiSession implements SteerSession {
  /** This session wrote the opening, or saw an earlier one read (its echo): its session will come. */
  private opened = false;
  /** This supervisor's probe, once written; `answered` once its refusal was seen. */
  private probe: { answered: boolean } | null = null;
  private readonly probeId: string;
  private sessionId: string | null = null;
  /** The prompt written or seen taken whose turn has not ended: no other prompt is written meanwhile. */
  private running: string | null = null;
  /** Messages gemini read (their echo) or ended: never written again. */
  private readonly done = new Set<string>();
  private readonly texts = new Map<string, string>();
  private waiting: string[] = [];
  /** The running prompt's newest ask: answered "cancelled" by an interrupt, withdrawn at the turn's end. */
  private ask: string | number | null = null;
  /** Lines owed at the next look: denials of asks catherd does not take. */
  private readonly owed: string[] = [];

  constructor(private readonly start: GeminiStart) {
    this.probeId = `${ACP_IDS.probe}${start.adoption ?? 0}`;
  }

  observe(facts: LineFacts): LineFacts {
    if (facts.thread !== undefined) this.sessionId = facts.thread;
    if (facts.answered?.id === ACP_IDS.opened) this.opened = true;
    if (facts.answered?.id === this.probeId && this.probe !== null) this.probe.answered = true;
    if (facts.taken !== undefined) this.seeTaken(facts.taken);
    const seen = facts.asks === undefined ? facts : this.seeAsk(facts);
    const ended = facts.turn?.running === false ? facts.turn.id : null;
    return ended === null ? seen : this.seeEnd(ended, seen);
  }

  due(): string[] {
    if (this.probe === null && (this.start.adoption ?? 0) > 0) return [this.writeProbe()];
    if (this.unprobed()) return [];
    return [...this.opening(), ...this.owed.splice(0), ...this.flush()];
  }

  userLines(text: string, uuid: string): string[] {
    if (this.done.has(uuid) || this.running === uuid || this.waiting.includes(uuid)) return [];
    this.texts.set(uuid, text);
    this.waiting.push(uuid);
    return this.flush();
  }

  interruptLines(_requestId: string): string[] {
    const sessionId = this.key();
    if (sessionId === null || this.running === null || this.unprobed()) return [];
    const lines = [rpc({ method: "session/cancel", params: { sessionId } })];
    // ACP: the client answers a pending ask "cancelled" after a cancel; gemini waits for it till then.
    if (this.ask !== null) lines.push(rpc({ id: this.ask, result: { outcome: { outcome: "cancelled" } } }));
    return lines;
  }

  /**
   * The opening, once, in one write of a few hundred bytes (under PIPE_BUF, into an empty channel: read
   * whole or not at all): initialize, session/new (session/load of a follow-up's thread, by its load
   * key), and the echo request `opened`, whose refusal says gemini read them. None when a session or an
   * earlier opening's echo is known: that session will come.
   */
  private opening(): string[] {
    if (this.opened || this.sessionId !== null) return [];
    this.opened = true;
    const { resume, cwd } = this.start;
    const params = { cwd, mcpServers: [] };
    const open =
      resume === null
        ? request(ACP_IDS.session, "session/new", params)
        : request(`${ACP_IDS.session}:${resume}`, "session/load", { sessionId: loadKey(resume), ...params });
    const init = request(ACP_IDS.init, "initialize", { protocolVersion: 1, clientCapabilities: {} });
    return [[init, open, request(ACP_IDS.opened, ECHO_METHOD, {})].join("\n")];
  }

  /** An adopter whose probe is not written, or not answered yet: it writes nothing else. */
  private unprobed(): boolean {
    if (this.probe === null) return (this.start.adoption ?? 0) > 0;
    return !this.probe.answered;
  }

  /**
   * An adopter's first line: an echo request of its own (`probe:<adoption>`, so an earlier adopter's is not
   * its own). It starts with a newline: a line the dead supervisor left torn becomes one gemini refuses to
   * parse and skips (its stderr says so), and the torn message, unanswered, is given again.
   */
  private writeProbe(): string {
    this.probe = { answered: false };
    return `\n${request(this.probeId, ECHO_METHOD, {})}`;
  }

  /** The next waiting message not taken yet, when no prompt runs: its prompt and its echo, in one write. */
  private flush(): string[] {
    this.waiting = this.waiting.filter((uuid) => !this.done.has(uuid));
    const uuid = this.waiting[0];
    const sessionId = this.key();
    if (uuid === undefined || sessionId === null || this.running !== null || this.unprobed()) return [];
    this.waiting.shift();
    this.running = uuid;
    const prompt = [{ type: "text", text: this.texts.get(uuid) ?? "" }];
    const lines = [
      request(`${ACP_IDS.prompt}${uuid}`, "session/prompt", { sessionId, prompt }),
      request(`${ACP_IDS.taken}${uuid}`, ECHO_METHOD, {}),
    ];
    return [lines.join("\n")];
  }

  /** The id gemini keys the session by: a loaded thread's load key, else the id session/new gave. */
  private key(): string | null {
    const { resume } = this.start;
    return resume !== null && this.sessionId === resume ? loadKey(resume) : this.sessionId;
  }

  /** gemini read a prompt: an adopter learns here which one runs (its turn's end not seen yet). */
  private seeTaken(uuid: string): void {
    if (!this.done.has(uuid)) this.running = uuid;
    this.done.add(uuid);
  }

  /** An ask: kept as the running prompt's, or denied at once when catherd does not take asks. */
  private seeAsk(facts: LineFacts): LineFacts {
    const id = facts.asks?.request.id;
    if (typeof id !== "string" && typeof id !== "number") return facts;
    if (this.start.asks) {
      this.ask = id;
      return facts;
    }
    this.owed.push(permissionAnswer(id, facts.asks?.input, REJECT));
    const { asks: _asks, ...rest } = facts;
    return { ...rest, describe: `denied: ${facts.asks?.asks ?? "a tool"}` };
  }

  /** A prompt's turn ended: the next may go; an ask of it still open was withdrawn by the turn's end. */
  private seeEnd(uuid: string, facts: LineFacts): LineFacts {
    this.done.add(uuid);
    if (this.running === uuid) this.running = null;
    const ask = this.ask;
    this.ask = null;
    return ask === null ? facts : { ...facts, withdrawn: ask };
  }
}

/** An answer to gemini's permission ask: the option it offers to allow once, or to reject. */
export function responseLine(
  req: Readonly<Record<string, unknown>>,
  input: unknown,
  answer: AskAnswer,
): string {
  return permissionAnswer(req.id, input, answer.allow ? ALLOW : REJECT);
}

/**
 * gemini over ACP: a message waits for the turn's end (`turn-end`). No end line: gemini ends at the end of
 * its input, which the channel never gives, so the supervisor stops it once the conversation is over.
 */
export const geminiSteer: SteerProtocol = {
  joins: "turn-end",
  waits: "gemini takes messages between turns",
  session: (start: SessionStart) =>
    new GeminiSession({
      resume: start.env[RESUME_ENV] ?? null,
      asks: start.env[ASKS_ENV] === "1",
      cwd: start.cwd ?? ".",
      adoption: start.adoption ?? 0,
    }),
  responseLine,
  probe: rpcProbe("gemini --acp", ["--acp", "--skip-trust"], {
    method: "initialize",
    params: { protocolVersion: 1, clientCapabilities: {} },
    jsonrpc: true,
  }),
};
