import type { ErrorFact } from "../domain/ending/failure.js";
import type { LineFacts, ToolOpen } from "../domain/watch/facts.js";
import { NEUTRAL, PROGRESS } from "../domain/watch/facts.js";
import { type Evidence, errorFact, retryKind, statusInText } from "./classify.js";
import { rateLimitEvent } from "./claude-windows.js";
import {
  AGENT_DEFAULTS,
  asCount,
  asId,
  asRecord,
  asString,
  describeToolCall,
  finalizeFromSummary,
  flagValue,
  type ModelUseOrWhy,
  modelUse,
  oneLine,
  parseObject,
  tokenFields,
  usageFacts,
  uuidThread,
} from "./line-parsing.js";
import { linesSession } from "./lines-session.js";
import type { Backend, BillingContext, PlanRequest, SteerProtocol } from "./types.js";

// `claude -p --output-format stream-json --verbose` (test/fixtures/recorded/claude, Claude Code 2.1.197).
// system/init{session_id} → assistant{tool_use.id} → user{tool_result.tool_use_id} → assistant text →
// result{subtype, is_error, result, usage, total_cost_usd}. Each provider retry is system/api_retry
// {attempt, max_retries, error_status}. A final failure is a synthetic assistant message (model
// "<synthetic>") and then a result with subtype "success" AND is_error true: is_error decides.
//
// Failures (test/fixtures/recorded/claude, specs/backends.md): each retry carries `error_status` and a category
// (`error`: authentication_failed, rate_limit, server_error, overloaded, unknown); the synthetic message
// carries the category of the final failure (billing_error, model_not_found, invalid_request…) and its
// text, which quotes the provider after "API Error: NNN" (and a rate limit's "resets at ‹ISO›"); the
// result carries `api_error_status` and `terminal_reason` (prompt_too_long). A thread that does not exist
// is a result with `errors: ["No conversation found with session ID: …"]`; a bad flag is stderr only.
//
// Usage (specs/backends.md, "Usage and cost"): every assistant line carries its message's `usage`, the
// same on each content block of one message (so it is counted once per message id), with the input of
// the request exact and the output as it stood when the message started (1). The result's `modelUsage`
// (per model, with Claude's own `costUSD`) is the run's total; its `usage` alone can be all zeros (a run
// its --max-budget-usd stopped), so `modelUsage` is read first. `input_tokens` excludes both cache fields.
//
// Quota windows (claude-windows.ts): `rate_limit_event` lines, under a claude.ai login only. A spent
// window is `status: rejected`, then the synthetic message and an error result "You've hit your session
// limit · resets 5:57am (UTC)" (api_error_status 429), exit 1, no retry: classify.ts reads those words
// as `quota`, and the record's retry time is the rejected window's reset (ending.ts).

/**
 * Access levels → Claude's permission modes (`claude --help` of 2.1.197 lists acceptEdits, auto,
 * bypassPermissions, default, dontAsk, plan). In -p mode nobody can answer a permission prompt, so
 * whatever would prompt is denied. All three are enforced by Claude's own permission layer, which also
 * honours allow rules in the user's settings (those can widen read-only and workspace-write):
 * - read-only: dontAsk — reads run, anything that would prompt (edits, most Bash) is denied. Chosen over
 *   `plan`, which changes the agent's task into writing a plan.
 * - workspace-write: acceptEdits — edits inside the working directories and simple filesystem commands
 *   (mkdir, mv, cp…) run; other Bash commands (tests, builds) would prompt and are therefore denied.
 * - full: --dangerously-skip-permissions — everything runs. Claude refuses it when run as root unless
 *   IS_SANDBOX=1 is set; catherd does not set that for the user.
 */
const ACCESS_FLAGS = {
  "read-only": ["--permission-mode", "dontAsk"],
  "workspace-write": ["--permission-mode", "acceptEdits"],
  full: ["--dangerously-skip-permissions"],
} as const;

function plan(request: PlanRequest) {
  // With -p and no prompt argument Claude reads the prompt from stdin (the brief file) to EOF.
  const args = ["-p", "--output-format", "stream-json", "--verbose"];
  if (request.thread !== null) args.push("--resume", request.thread);
  if (request.access !== null) args.push(...ACCESS_FLAGS[request.access]);
  if (request.model !== null) args.push("--model", request.model);
  // --effort takes low|medium|high|xhigh|max; the value is passed through for Claude to validate.
  if (request.effort !== null) args.push("--effort", request.effort);
  // Claude's own budget, checked after each response by its own prices: it stops with a result of
  // subtype error_max_budget_usd, often before catherd's estimate of the same cap is reached.
  if (request.maxCostUsd !== null) args.push("--max-budget-usd", String(request.maxCostUsd));
  // --answer-schema: Claude takes the schema inline (`--json-schema <json>`, an object), gives the model a
  // StructuredOutput tool whose input is checked against it (ajv; up to 5 tries in the turn, then a result
  // of subtype error_max_structured_output_retries) and puts the answer in its result's
  // `structured_output` (specs/backends.md, "An answer that fits a schema").
  if (request.answerSchema != null) args.push("--json-schema", compactJson(request.answerSchema.text));
  // --steerable (specs/steering.md): the brief and every later message come as stream-json user lines on
  // the channel, each echoed back once taken; with questions, permission asks come to catherd.
  const steer = request.steer ?? null;
  if (steer !== null) {
    args.push("--input-format", "stream-json", "--replay-user-messages");
    if (steer.questions) args.push("--permission-prompt-tool", "stdio");
  }
  args.push(...request.extraArgs);
  return {
    cmd: request.bin,
    args,
    env: {},
    stdin: steer === null ? ("brief" as const) : ("channel" as const),
  };
}

/**
 * Claude's stream-json input (specs/steering.md, "Which backends"): a user line joins the running turn (after
 * the tool result it waits for); a uuid it has seen is skipped; an interrupt is a control request, and the
 * turn it stops ends in a result of subtype error_during_execution; a permission answer carries
 * `updatedInput` to allow, `message` to deny (Claude rejects an answer without them).
 */
const claudeLines = {
  userLine: (text: string, uuid: string) =>
    JSON.stringify({
      type: "user",
      message: { role: "user", content: [{ type: "text", text }] },
      parent_tool_use_id: null,
      session_id: "",
      uuid,
    }),
  interruptLine: (requestId: string) =>
    JSON.stringify({ type: "control_request", request_id: requestId, request: { subtype: "interrupt" } }),
};

const claudeSteer: SteerProtocol = {
  joins: "mid-turn",
  session: () => linesSession(claudeLines),
  responseLine: (request, input, answer) => {
    const behavior = answer.allow
      ? { behavior: "allow", updatedInput: answerInput(input, answer.text) }
      : { behavior: "deny", message: answer.why ?? "denied by catherd" };
    return JSON.stringify({
      type: "control_response",
      response: { subtype: "success", request_id: request.requestId, response: behavior },
    });
  },
  // end_session: an idle Claude answers it and exits 0 with its input still open (mid-turn it would
  // abort the turn: the supervisor sends it only once the conversation is over).
  endLine: (requestId) =>
    JSON.stringify({ type: "control_request", request_id: requestId, request: { subtype: "end_session" } }),
};

/**
 * The input an allowed tool runs with: as asked. An AskUserQuestion's answer rides along as `answers`,
 * question text → answer: a JSON object of those as it is, else the text answers the first question.
 */
function answerInput(input: unknown, text: string | null): unknown {
  const asked = asRecord(input) ?? {};
  if (text === null) return asked;
  const given = parseObject(text);
  if (given !== null && Object.values(given).every((v) => typeof v === "string")) {
    return { ...asked, answers: given };
  }
  const questions = Array.isArray(asked.questions) ? asked.questions : [];
  const first = asString(asRecord(questions[0])?.question) ?? "";
  return { ...asked, answers: { [first]: text } };
}

/** A control request from Claude: a permission ask (`can_use_tool`) becomes a question for catherd. */
function parseControlRequest(event: Record<string, unknown>): LineFacts {
  const request = asRecord(event.request);
  const requestId = asString(event.request_id);
  if (request?.subtype !== "can_use_tool" || requestId === null) return NEUTRAL;
  const tool = asString(request.tool_name) ?? "tool";
  const input = asRecord(request.input) ?? {};
  const question = tool === "AskUserQuestion";
  const asks = question ? askedQuestion(input) : describeToolCall(tool, input);
  return {
    progress: true,
    asks: {
      kind: question ? "question" : "permission",
      asks,
      tool,
      input,
      request: { requestId, toolUseId: asString(request.tool_use_id) },
    },
    describe: `asks: ${oneLine(asks)}`,
  };
}

/** AskUserQuestion's first question, as a person reads it. */
function askedQuestion(input: Record<string, unknown>): string {
  const questions = Array.isArray(input.questions) ? input.questions : [];
  const first = asRecord(questions[0]);
  return asString(first?.question) ?? "a question";
}

/** A schema's text on one line (a command line shown in `show`), as it was when it is not JSON. */
function compactJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

function positive(value: unknown): number | null {
  const n = asCount(value);
  return n > 0 ? n : null;
}

/** Claude's input_tokens excludes cache reads and writes; catherd's input includes both. */
function claudeUse(
  model: string | null,
  usage: Record<string, unknown>,
  keys: readonly [string, string, string, string],
  cost?: unknown,
): ModelUseOrWhy {
  const [input, read, written, output] = keys;
  const f = tokenFields(usage, keys);
  if (typeof f === "string") return f;
  const counts = {
    input: (f[input] ?? 0) + (f[read] ?? 0) + (f[written] ?? 0),
    cachedInput: f[read] ?? 0,
    cacheWrite: f[written] ?? 0,
    output: f[output] ?? 0,
    reasoning: 0,
  };
  return modelUse(model, counts, cost);
}

const MESSAGE_USAGE = [
  "input_tokens",
  "cache_read_input_tokens",
  "cache_creation_input_tokens",
  "output_tokens",
] as const;
const MODEL_USAGE = [
  "inputTokens",
  "cacheReadInputTokens",
  "cacheCreationInputTokens",
  "outputTokens",
] as const;

/** The run's total: per model from `modelUsage` (with Claude's costUSD), else `usage` and total_cost_usd. */
function resultUsage(event: Record<string, unknown>): Pick<LineFacts, "usage" | "usageIgnored"> | null {
  const perModel = asRecord(event.modelUsage);
  const names = perModel === null ? [] : Object.keys(perModel);
  if (perModel !== null && names.length > 0) {
    return usageFacts(
      "run",
      null,
      names.map((name) => {
        const use = asRecord(perModel[name]);
        return use === null
          ? `modelUsage.${name} is not an object`
          : claudeUse(name, use, MODEL_USAGE, use.costUSD);
      }),
    );
  }
  const usage = asRecord(event.usage);
  if (usage === null) return null;
  return usageFacts("run", null, [claudeUse(null, usage, MESSAGE_USAGE, event.total_cost_usd)]);
}

function blocks(message: Record<string, unknown> | null): Record<string, unknown>[] {
  const content = message?.content;
  if (!Array.isArray(content)) return [];
  return content.map(asRecord).filter((b): b is Record<string, unknown> => b !== null);
}

function parseSystem(event: Record<string, unknown>): LineFacts {
  switch (event.subtype) {
    case "init": {
      const thread = asId(event.session_id);
      const model = asString(event.model);
      const describe = model === null ? "session started" : `session started (${model})`;
      return thread === null ? { progress: true, describe } : { progress: true, thread, describe };
    }
    case "api_retry": {
      const attempt = positive(event.attempt);
      const max = positive(event.max_retries);
      const status = positive(event.error_status);
      const cause = asString(event.error) ?? "error";
      const message = status === null ? `request failed: ${cause}` : `HTTP ${status} ${cause}`;
      const kind = retryKind({ status, codes: [cause], text: message });
      return {
        progress: false,
        retry: { attempt, max, message, status, kind },
        describe: `retrying ${attempt ?? "?"}/${max ?? "?"} (${message})`,
      };
    }
    case "task_started":
      return { progress: true, describe: `running ${oneLine(asString(event.description) ?? "task")}` };
    default:
      return PROGRESS;
  }
}

/** A failure Claude printed: words after "API Error: NNN" quote the provider, others are Claude's own. */
function claudeError(text: string, evidence: Omit<Evidence, "text"> = {}): ErrorFact {
  const quoted = statusInText(text);
  const status = evidence.status ?? quoted;
  return errorFact({ ...evidence, text, status, words: quoted === null ? "cli" : "provider" });
}

function parseAssistant(event: Record<string, unknown>): LineFacts {
  const message = asRecord(event.message);
  const opened: ToolOpen[] = [];
  const texts: string[] = [];
  let thinking = false;
  for (const block of blocks(message)) {
    if (block.type === "tool_use") {
      const id = asString(block.id);
      if (id !== null)
        opened.push({ id, label: describeToolCall(asString(block.name) ?? "tool", asRecord(block.input)) });
    } else if (block.type === "text") {
      const text = asString(block.text);
      if (text !== null && text.length > 0) texts.push(text);
    } else if (block.type === "thinking" || block.type === "redacted_thinking") {
      thinking = true;
    }
  }
  const text = texts.join("\n");
  // The synthetic message that precedes a failed result carries the error, not an answer.
  if (message?.model === "<synthetic>") {
    if (text.length === 0) return PROGRESS;
    const error = claudeError(text, { codes: [asString(event.error)] });
    return { progress: true, error, describe: oneLine(text) };
  }
  const out: LineFacts = { progress: true, ...messageUsage(message) };
  // A sub-agent's text and tools (parent_tool_use_id set) are not the answer to the brief.
  const main = asString(event.parent_tool_use_id) === null;
  if (opened.length > 0) {
    out.toolsOpened = opened;
    out.describe = opened.map((t) => t.label).join("; ");
    // What the agent said before a tool call was narration: the reply is what it says after the last one.
    if (main) out.reply = { text: "", mode: "replace" };
  } else if (text.length > 0 && main) {
    out.reply = { text, mode: "message" };
    out.describe ??= `says ${oneLine(text)}`;
  }
  if (thinking) out.describe ??= "thinking";
  return out;
}

/** A message's usage, counted once per message id (a sub-agent's messages are billed too). */
function messageUsage(message: Record<string, unknown> | null): Pick<LineFacts, "usage" | "usageIgnored"> {
  const usage = asRecord(message?.usage);
  if (message === null || usage === null) return {};
  return usageFacts("message", asString(message.id), [
    claudeUse(asString(message.model), usage, MESSAGE_USAGE),
  ]);
}

function parseUser(event: Record<string, unknown>): LineFacts {
  // --replay-user-messages: Claude's echo of a user line it took from its input. The reply is what the
  // agent says after the last message it took: what came before answered an earlier one.
  const uuid = asString(event.uuid);
  if (uuid !== null && event.isReplay === true && !hasToolResult(event)) {
    return { progress: true, taken: uuid, reply: { text: "", mode: "replace" }, describe: "took a message" };
  }
  const results = blocks(asRecord(event.message)).filter((b) => b.type === "tool_result");
  const closed = results.map((b) => asString(b.tool_use_id)).filter((id): id is string => id !== null);
  if (closed.length === 0) return PROGRESS;
  const failed = results.some((b) => b.is_error === true);
  return { progress: true, toolsClosed: closed, describe: failed ? "tool failed" : "tool done" };
}

function hasToolResult(event: Record<string, unknown>): boolean {
  return blocks(asRecord(event.message)).some((b) => b.type === "tool_result");
}

function parseResult(event: Record<string, unknown>): LineFacts {
  const out: LineFacts = { progress: true, ...resultUsage(event) };
  const thread = asId(event.session_id);
  if (thread !== null) out.thread = thread;
  const text = asString(event.result);
  if (event.is_error !== true) {
    out.final = { isError: false, message: null };
    // With --json-schema, the StructuredOutput tool's input as Claude validated it.
    if (event.structured_output !== undefined) out.final.structured = event.structured_output;
    // result.result is what Claude calls its result; it is normally the last message gathered already.
    if (text !== null) out.reply = { text, mode: "result" };
    out.describe = "finished";
    return out;
  }
  const errors = Array.isArray(event.errors) ? event.errors.filter((e) => typeof e === "string") : [];
  const message =
    text ?? (errors.length > 0 ? errors.join("; ") : (asString(event.subtype) ?? "claude failed"));
  const status = positive(event.api_error_status);
  const codes = [asString(event.terminal_reason), asString(event.subtype)];
  out.error = claudeError(message, { status, codes });
  out.final = { isError: true, message };
  out.describe = `failed: ${oneLine(message)}`;
  return out;
}

function parse(line: string): LineFacts {
  const event = parseObject(line);
  if (event === null) return PROGRESS;
  switch (event.type) {
    case "system":
      return parseSystem(event);
    case "assistant":
      return parseAssistant(event);
    case "user":
      return parseUser(event);
    case "result":
      return parseResult(event);
    case "control_request":
      return parseControlRequest(event);
    case "rate_limit_event":
      return rateLimitEvent(event);
    // Claude's answer to a control request of catherd's, or its echo of catherd's answer: not work.
    case "control_response":
      return NEUTRAL;
    default:
      return PROGRESS;
  }
}

/**
 * Claude's stderr: its argument parser's "error: …" and a resume of a thread that does not exist, else
 * diagnostics. Every line stays progress, as stderr is for a backend that does not report retries there.
 */
function parseStderr(line: string): LineFacts {
  if (line.startsWith("error: ")) {
    return { progress: true, error: errorFact({ text: line, kind: "cli" }), describe: oneLine(line) };
  }
  if (line.startsWith("No conversation found")) {
    return { progress: true, error: errorFact({ text: line }), describe: oneLine(line) };
  }
  return PROGRESS;
}

/**
 * Claude bills Anthropic's prices; the model is --model, else ANTHROPIC_MODEL, else `model` in its
 * settings (CLAUDE_CONFIG_DIR, else ~/.claude). Its stream names the model of every message anyway.
 */
function billing(context: BillingContext) {
  const fromArgs = flagValue(context.args, ["--model"]);
  const fromEnv = context.env.ANTHROPIC_MODEL ?? null;
  const dir = context.env.CLAUDE_CONFIG_DIR ?? `${context.env.HOME ?? ""}/.claude`;
  const settings = parseObject(context.readText(`${dir}/settings.json`) ?? "");
  return { provider: "anthropic", model: fromArgs ?? fromEnv ?? asString(settings?.model) };
}

export const claudeCodeBackend: Backend = {
  id: "claude-code",
  label: "claude",
  command: "cli",
  defaultBin: "claude",
  binEnv: "CATHERD_CLAUDE_BIN",
  accountVariable: "CLAUDE_CONFIG_DIR",
  // Its login: `claude` then /login writes .credentials.json in its config folder; a key or token variable, or Bedrock/Vertex, stands for one.
  login: {
    files: [
      { variable: "CLAUDE_CONFIG_DIR", path: ".credentials.json", underHome: ".claude/.credentials.json" },
    ],
    variables: [
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_AUTH_TOKEN",
      "CLAUDE_CODE_OAUTH_TOKEN",
      "CLAUDE_CODE_USE_BEDROCK",
      "CLAUDE_CODE_USE_VERTEX",
    ],
  },
  installHint: "npm install -g @anthropic-ai/claude-code",
  versionArgs: ["--version"],
  minVersion: "2.1.197",
  needsBrief: true,
  reportsUsage: true,
  plainText: false,
  answerSchemaFlag: true,
  // Claude exits within a second of its result in every recording; 30 s is the common grace.
  defaults: { ...AGENT_DEFAULTS, graceAfterFinalMs: 30_000 },
  plan,
  parse,
  parseStderr,
  // session_id: a UUID; `--resume` takes it.
  checkThread: uuidThread("Claude Code"),
  finalize: (summary, exit) => finalizeFromSummary(summary, exit),
  billing,
  steer: claudeSteer,
};
