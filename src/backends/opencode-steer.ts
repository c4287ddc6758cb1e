import { type BridgeOp, PROMPT_ID } from "../domain/steering/opencode-bridge-wire.js";
import type { LineFacts } from "../domain/watch/facts.js";
import { asRecord, asString, parseObject } from "./line-parsing.js";
import type { AskAnswer, PlanRequest, SteerProtocol, SteerSession } from "./types.js";

// A steerable opencode dispatch runs catherd's opencode bridge (src/infra/opencode-bridge/), which runs
// `opencode serve` and is the agent process to the supervisor (specs/steering.md "The seam";
// specs/backends.md "opencode 1.18.33: `opencode serve`"). The session writes the bridge one op a line:
// each message a `prompt` (opencode's prompt_async, at once: a prompt given mid-turn joins the running turn
// after the tool's result), an interrupt an `abort`, an answer a `reply` or a question's. A prompt's id
// names the message (`prompt:<uuid>`), and opencode's echo of it names its uuid: the bridge gives a
// message once however often it is given, and a message opencode took (its answer in the stream) is never
// written again, by this supervisor or an adopter.

/**
 * Access levels → opencode's permission rules for a steerable dispatch (OPENCODE_PERMISSION, merged over
 * every config file), as `run`'s (opencode.ts) where catherd takes no questions — what would ask is
 * rejected by the bridge, as `opencode run` rejects it — and, with `--on-question`, asking where Claude
 * asks (specs/steering.md, "Questions"): without a level, edits and commands ask; workspace-write,
 * commands ask (edits in the folder do not); read-only stays denied (a policy must not widen it); full
 * asks nothing.
 */
const PERMISSION = {
  plain: {
    "read-only": { edit: "deny", bash: "deny", external_directory: "deny" },
    "workspace-write": { edit: "allow", bash: "allow", external_directory: "deny" },
  },
  asks: {
    "read-only": { edit: "deny", bash: "deny", external_directory: "deny" },
    "workspace-write": { edit: "allow", bash: "ask", external_directory: "deny" },
  },
  askingDefault: { edit: "ask", bash: "ask", webfetch: "ask", external_directory: "ask" },
} as const;

/** Every permission allowed: `--access full`, as `run --auto` approves every ask. */
const FULL = { "*": "allow" } as const;

/** The permission rules of a steerable dispatch; null: opencode's own configuration. */
export function servePermission(access: PlanRequest["access"], questions: boolean): object | null {
  if (access === "full") return FULL;
  if (access === null) return questions ? PERMISSION.askingDefault : null;
  return (questions ? PERMISSION.asks : PERMISSION.plain)[access];
}

/**
 * `node <bridge> <opencode> …`: the bridge with the dispatch's settings as its arguments (a follow-up's
 * session, the model and variant of each prompt, the permission rules of its server, whether asks come to
 * catherd); the dispatch's extra arguments go to `opencode serve`. stdin is the channel.
 */
export function bridgePlan(request: PlanRequest, steer: NonNullable<PlanRequest["steer"]>) {
  const bridge = steer.bridge;
  if (bridge === undefined) throw new TypeError("a steerable opencode plan needs the bridge program");
  const args = [bridge.program, request.bin];
  if (request.thread !== null) args.push("--session", request.thread);
  if (request.model !== null) args.push("--model", request.model);
  if (request.effort !== null) args.push("--variant", request.effort);
  const permission = servePermission(request.access, steer.questions);
  if (permission !== null) args.push("--permission", JSON.stringify(permission));
  if (steer.questions) args.push("--asks");
  if (request.extraArgs.length > 0) args.push("--", ...request.extraArgs);
  return { cmd: bridge.node, args, env: {}, stdin: "channel" as const };
}

/** The CLI a plan of this backend runs: the bridge's first argument after its program, else the command. */
export function opencodeBin(cmd: string, args: readonly string[]): string {
  const program = args[0] ?? "";
  return /(^|\/)opencode-bridge\.js$/.test(program) && args[1] !== undefined ? args[1] : cmd;
}

const line = (op: BridgeOp) => JSON.stringify(op);

/**
 * One dispatch's conversation with its bridge, from the stream's facts: which messages opencode took (not
 * given again) and whether a turn runs (an interrupt has something to stop).
 */
export class OpencodeSession implements SteerSession {
  private running = false;
  private readonly accepted = new Set<string>();

  observe(facts: LineFacts): undefined {
    if (facts.turn !== undefined) this.running = facts.turn.running;
    const answer = facts.answered;
    if (answer?.ok === true && answer.id.startsWith(PROMPT_ID)) {
      this.accepted.add(answer.id.slice(PROMPT_ID.length));
    }
    return undefined;
  }

  due(): string[] {
    return [];
  }

  userLines(text: string, uuid: string): string[] {
    if (this.accepted.has(uuid)) return [];
    return [line({ op: "prompt", id: `${PROMPT_ID}${uuid}`, uuid, text })];
  }

  interruptLines(requestId: string): string[] {
    return this.running ? [line({ op: "abort", id: requestId })] : [];
  }
}

/**
 * An answer to an ask: a permission `once` or `reject` (the reject's message, `--why` else "denied by
 * catherd", reaches the model as the tool's failure); a question its text as the answer to its first
 * question (a JSON object of question → answer answers several), rejected when declined.
 */
export function responseLine(
  request: Readonly<Record<string, unknown>>,
  input: unknown,
  answer: AskAnswer,
): string {
  const id = String(request.id);
  if (request.kind === "question") {
    if (!answer.allow) return line({ op: "question-reject", id: `question:${id}`, question: id });
    const answers = questionAnswers(input, answer.text);
    return line({ op: "question-reply", id: `question:${id}`, question: id, answers });
  }
  const message = answer.allow ? {} : { message: answer.why ?? "denied by catherd" };
  return line({
    op: "reply",
    id: `reply:${id}`,
    permission: id,
    reply: answer.allow ? "once" : "reject",
    ...message,
  });
}

function questionAnswers(input: unknown, text: string | null): string[][] {
  const questions = Array.isArray(asRecord(input)?.questions)
    ? (asRecord(input)?.questions as unknown[])
    : [];
  const given = parseObject(text ?? "");
  if (given === null || !Object.values(given).every((v) => typeof v === "string")) {
    return questions.map((_, i) => (i === 0 ? [text ?? ""] : []));
  }
  return questions.map((q) => {
    const asked = asString(asRecord(q)?.question) ?? "";
    return typeof given[asked] === "string" ? [given[asked] as string] : [];
  });
}

/**
 * opencode over its server, through catherd's bridge: a message joins the running turn (after the tool's
 * result); the end line stops the server and the bridge, which exits 0.
 */
export const opencodeSteer: SteerProtocol = {
  joins: "mid-turn",
  session: () => new OpencodeSession(),
  responseLine,
  endLine: (requestId) => line({ op: "end", id: requestId }),
};
