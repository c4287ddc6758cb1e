import type { ExitFacts } from "../domain/ending/ending.js";
import { type ErrorFact, retryAfterTime } from "../domain/ending/failure.js";
import type { StreamSummary } from "../domain/ending/summary.js";
import type { QuotaWindow } from "../domain/spend/quota.js";
import type { ErrorKind } from "../domain/vocab.js";
import type { LineFacts } from "../domain/watch/facts.js";
import { NEUTRAL, PROGRESS } from "../domain/watch/facts.js";
import { classify, errorFact, providerBody, retryKind } from "./classify.js";
import { ECHO_METHOD, isAcpLine, parseAcp } from "./gemini-acp.js";
import { APPROVAL_FLAGS, acpPlan, geminiSteer } from "./gemini-steer.js";
import {
  AGENT_DEFAULTS,
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
import type { Backend, BillingContext, Outcome, PlanRequest, UsageLog, UsageLogContext } from "./types.js";

// `gemini --output-format stream-json` (test/fixtures/recorded/gemini, gemini-cli 0.61.0).
// init{session_id} → message{role:user} → tool_use{tool_id} → tool_result{tool_id, status} →
// message{role:assistant, content, delta:true}… → result{status: success|error, error?, stats}.
// Provider retries appear only on stderr ("Attempt n failed with status 500. Retrying with backoff…",
// each followed by a stack trace). Exit codes lie (244 after 500s, 173 after 429s, 0 on SIGTERM):
// result.status decides.
//
// Failures (test/fixtures/recorded/gemini, specs/backends.md): result.error.message is "[API Error: ‹x›]" and
// sometimes advice after it; ‹x› is the provider's raw JSON body (with its `code`) except for a 404 and
// for quota errors, which gemini rewrites ("You have exhausted your daily quota…", "Suggested retry after
// 3600s."). The provider's own words then appear only on stderr, in the dump of the error's `cause`
// ("    message: '‹words›'"). The exit code is the HTTP status modulo 256 (401 → 145, 429 → 173): evidence
// of the kind, never the message. A bad --resume is stderr "Error resuming session: …" (exit 42), a bad
// flag yargs' "Unknown arguments: …" (exit 1).
//
// Usage (specs/backends.md, "Usage and cost"): the stream reports it once, in the result's `stats` (this
// run's, also after --resume), per model under `models`. `input_tokens` is the prompt count, cached
// included; `output_tokens` is the candidates' count WITHOUT thoughts, which Gemini bills as output:
// they are what `total_tokens` holds beyond input and output. Finer: the session file
// (<GEMINI_CLI_HOME or HOME>/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl), where gemini 0.61
// appends each model message with its `tokens` (input, output, cached, thoughts, tool) as it completes,
// again on each update of the same message (one `id`).

/**
 * Access levels → --approval-mode. Headless gemini turns every "ask the user" policy decision into a
 * deny, so these are enforced by gemini's policy engine:
 * - read-only: default — tools that need approval (shell, edit, write_file) are denied.
 * - workspace-write: auto_edit — edit tools run (gemini's file tools refuse paths outside the workspace
 *   directories); the shell still needs approval and is therefore denied: no tests or builds.
 * - full: yolo — everything runs. (`plan` is not used for read-only: headless plan mode approves its own
 *   exit_plan_mode and goes on to implement.)
 */
const ACCESS_FLAGS = APPROVAL_FLAGS;

function plan(request: PlanRequest) {
  // --steerable: `gemini --acp` (gemini-steer.ts); every other dispatch stream-json (specs/backends.md).
  if (request.steer != null) return acpPlan(request, request.steer.questions);
  // No -p: -p takes the prompt as an argument. With stdin not a TTY gemini runs headless and reads the
  // whole of stdin (up to 8 MiB) as the prompt. --skip-trust: headless gemini exits 55 in a folder it was
  // never told to trust, and forces any approval mode back to default there.
  const args = ["--output-format", "stream-json", "--skip-trust"];
  // --resume accepts a session UUID (or "latest", or an index); sessions are kept per project folder.
  if (request.thread !== null) args.push("--resume", request.thread);
  if (request.access !== null) args.push(...ACCESS_FLAGS[request.access]);
  if (request.model !== null) args.push("--model", request.model);
  // gemini has no effort flag (thinking budgets live in its settings): request.effort is not passed.
  args.push(...request.extraArgs);
  return { cmd: request.bin, args, env: {}, stdin: "brief" as const };
}

const API_ERROR = "[API Error: ";

/** A failure gemini printed: the provider's JSON body inside "[API Error: …]" when it is one. */
function geminiError(raw: string, fromMs: number | null, codes: readonly string[] = []): ErrorFact {
  let text = raw;
  if (raw.startsWith(API_ERROR)) {
    // The body ends at the "]" before gemini's advice (a raw JSON body is one line), else at the last "]".
    const advice = raw.indexOf("]\n");
    const end = advice >= 0 ? advice : raw.lastIndexOf("]");
    text = raw.slice(API_ERROR.length, end > 0 ? end : raw.length);
  }
  const body = providerBody(text);
  const fact =
    body === null
      ? errorFact({ text, codes, fromMs })
      : errorFact({ text: body.message, status: body.status, codes: body.codes, words: "provider", fromMs });
  // A retry time can be in the advice ("Suggested retry after 3600s.") as well as in the body.
  return { ...fact, retryAfter: errorFact({ text: raw, kind: null, fromMs }).retryAfter };
}

const STATS_FIELDS = ["input_tokens", "cached", "output_tokens", "total_tokens"] as const;

/** One model's stats in catherd's convention: thoughts (total beyond input and output) are output. */
function statsUse(model: string | null, stats: Record<string, unknown>): ModelUseOrWhy {
  const f = tokenFields(stats, STATS_FIELDS);
  if (typeof f === "string") return f;
  const thoughts = Math.max(0, f.total_tokens - f.input_tokens - f.output_tokens);
  return modelUse(model, {
    input: f.input_tokens,
    cachedInput: f.cached,
    cacheWrite: 0,
    output: f.output_tokens + thoughts,
    reasoning: thoughts,
  });
}

/** The run's usage: per model under stats.models, else the totals. */
function resultUsage(stats: Record<string, unknown> | null): Pick<LineFacts, "usage" | "usageIgnored"> {
  if (stats === null) return {};
  const models = asRecord(stats.models);
  const names = models === null ? [] : Object.keys(models);
  if (models === null || names.length === 0) return usageFacts("run", null, [statsUse(null, stats)]);
  return usageFacts(
    "run",
    null,
    names.map((name) => {
      const one = asRecord(models[name]);
      return one === null ? `stats.models.${name} is not an object` : statsUse(name, one);
    }),
  );
}

function parseResult(event: Record<string, unknown>): LineFacts {
  const usage = resultUsage(asRecord(event.stats));
  if (event.status === "success") {
    return { progress: true, final: { isError: false, message: null }, ...usage, describe: "finished" };
  }
  const error = asRecord(event.error);
  const raw = asString(error?.message) ?? `gemini result status ${String(event.status)}`;
  const at = Date.parse(asString(event.timestamp) ?? "");
  const fact = geminiError(raw, Number.isFinite(at) ? at : null);
  return {
    progress: true,
    final: { isError: true, message: fact.message },
    ...usage,
    error: fact,
    ...dailyWindow(raw, fact),
    describe: `failed: ${oneLine(fact.message)}`,
  };
}

/** gemini's words for a spent daily quota (a QuotaFailure whose quotaId names PerDay or Daily). */
const DAILY = /exhausted your daily quota/i;

/**
 * A failure that names a spent daily quota is the one window gemini tells of (it reads no quota headers):
 * `gemini/daily`, rejected, its reset where the words name a delay from the line's time (they seldom do).
 */
function dailyWindow(raw: string, fact: ErrorFact): Pick<LineFacts, "quota"> {
  if (!DAILY.test(raw)) return {};
  const window: QuotaWindow = {
    limit: "gemini",
    window: "daily",
    usedPercent: null,
    windowMinutes: 1440,
    resetsAt: retryAfterTime(fact.retryAfter, null),
    status: "rejected",
  };
  return { quota: [window] };
}

function parse(line: string): LineFacts {
  const event = parseObject(line);
  if (event === null) return PROGRESS;
  if (isAcpLine(event)) return parseAcp(event);
  switch (event.type) {
    case "init": {
      const thread = asId(event.session_id);
      const model = asString(event.model);
      const describe = model === null ? "session started" : `session started (${model})`;
      return thread === null ? { progress: true, describe } : { progress: true, thread, describe };
    }
    case "message": {
      const text = asString(event.content);
      if (event.role !== "assistant" || text === null) return PROGRESS;
      // The answer streams as deltas; every assistant chunk extends the reply.
      return { progress: true, reply: { text, mode: "append" }, describe: `says ${oneLine(text)}` };
    }
    case "tool_use": {
      const id = asString(event.tool_id);
      if (id === null) return PROGRESS;
      const label = describeToolCall(asString(event.tool_name) ?? "tool", asRecord(event.parameters));
      // Text before a tool call was narration: the reply is what the agent says after its last tool.
      return {
        progress: true,
        toolsOpened: [{ id, label }],
        reply: { text: "", mode: "replace" },
        describe: label,
      };
    }
    case "tool_result": {
      const id = asString(event.tool_id);
      if (id === null) return PROGRESS;
      const failure = asString(asRecord(event.error)?.message);
      const describe = event.status === "error" ? `tool failed: ${oneLine(failure ?? id)}` : "tool done";
      return { progress: true, toolsClosed: [id], describe };
    }
    case "error": {
      // Warnings and non-fatal errors on the way (a quota hit, RESOURCE_EXHAUSTED, is severity "error");
      // the result line says how the session ended, and a successful one outweighs an error seen here.
      const message = asString(event.message) ?? "error";
      if (event.severity !== "error") return { progress: true, describe: oneLine(message) };
      return { progress: true, error: geminiError(message, null), describe: oneLine(message) };
    }
    case "result":
      return parseResult(event);
    default:
      return PROGRESS;
  }
}

const RETRYING = /^Attempt (\d+) failed(?: with status (\d+))?\. Retrying with backoff/;
const GAVE_UP = /^Attempt (\d+) failed: (.*?)\.? Max attempts reached/;
/** "Error when talking to Gemini API Full report available at: ‹path› ‹ErrorName›: ‹message›". */
const REPORT = /^Error when talking to Gemini API(?: Full report available at: \S+ (\w+): (.*))?/;
/** The provider's words in the dump of an error's cause: "  cause: { code: 429, message: '…'" or "    message: '…' +". */
const CAUSE = /^\s+(?:cause: \{ code: (\d+), )?message: '(.*?)(?:\\n)?'(?: \+)?,?(?: details:.*)?$/;
const RESUME = /^Error resuming session: /;
/** The fields of a quota error's dump that say more than its words: "  retryDelayMs: 7200000,", "  reason: '…',". */
const DUMP_FIELD = /^ {2}(retryDelayMs|reason): '?(\w{1,64})'?,?$/;

/**
 * A quota error's dump field: its ErrorInfo reason (INSUFFICIENT_G1_CREDITS_BALANCE proves a spent quota:
 * classify.ts), or the retry delay gemini took from its RetryInfo, counted from the end of the dispatch.
 */
function dumpField(name: string, value: string): LineFacts {
  if (name === "reason") {
    const error = errorFact({ text: `gemini: ${value}`, codes: [value] });
    return error.kind === null ? NEUTRAL : stderrError(error, oneLine(error.message));
  }
  const delayMs = Number(value);
  if (!Number.isSafeInteger(delayMs)) return NEUTRAL;
  const error: ErrorFact = {
    message: `gemini: retry after ${delayMs} ms`,
    kind: null,
    status: null,
    words: "cli",
    retryAfter: { delayMs, fromMs: null },
  };
  return stderrError(error, oneLine(error.message));
}
const USAGE =
  /^(?:Unknown arguments?|Invalid values?|Not enough non-option arguments|Missing required argument):/;

/** A failure line of gemini's stderr, as an error fact that is not progress. */
function stderrError(error: ErrorFact, describe: string): LineFacts {
  return { progress: false, error, describe };
}

/**
 * gemini's stderr: retries (not progress), the final give-up and error report (errors), the provider's
 * words in an error dump, a failed resume and a bad flag (errors that are not progress), and otherwise
 * diagnostics — retry traces, start-up notices ("[STARTUP] …", "YOLO mode is enabled…", colour warnings).
 * gemini reports its work on stdout, so no other stderr line is progress: a start-up notice printed
 * between two retry attempts (seen with the real CLI) must not reset the retry streak.
 */
function parseStderr(line: string): LineFacts {
  // gemini dumps each request it refused, catherd's echo requests too (gemini-steer.ts): not a failure.
  if (line.includes(ECHO_METHOD)) return NEUTRAL;
  const retry = RETRYING.exec(line);
  if (retry !== null) {
    const attempt = Number(retry[1]);
    const status = retry[2] === undefined ? null : Number(retry[2]);
    const message = oneLine(line, 200);
    const suffix = status === null ? "" : ` (HTTP ${status})`;
    // gemini does not print its maximum (10 by default): max stays unknown.
    return {
      progress: false,
      retry: { attempt, max: null, message, status, kind: retryKind({ status, text: line }) },
      describe: `retrying ${attempt}${suffix}`,
    };
  }
  const gaveUp = GAVE_UP.exec(line);
  if (gaveUp !== null) {
    const error = geminiError(`${API_ERROR}${gaveUp[2] ?? line}]`, null);
    return { progress: true, error, describe: `gave up after ${gaveUp[1]} attempts` };
  }
  const report = REPORT.exec(line);
  if (report !== null) {
    const [, name, message] = report;
    const error =
      message === undefined ? errorFact({ text: line }) : geminiError(message, null, [name ?? ""]);
    return { progress: true, error };
  }
  const cause = CAUSE.exec(line);
  if (cause?.[2] !== undefined) {
    const status = cause[1] === undefined ? null : Number(cause[1]);
    const words = cause[2].replace(/\\'/g, "'");
    return stderrError(errorFact({ text: words, status, words: "provider" }), oneLine(words));
  }
  const field = DUMP_FIELD.exec(line);
  if (field !== null) return dumpField(field[1] ?? "", field[2] ?? "");
  if (RESUME.test(line) || USAGE.test(line)) {
    const error = USAGE.test(line) ? errorFact({ text: line, kind: "cli" }) : errorFact({ text: line });
    return stderrError(error, oneLine(line));
  }
  return NEUTRAL;
}

/**
 * gemini's exit codes as evidence: 41 is its authentication failure; 144–248 are an HTTP status 400–504
 * modulo 256 (gemini exits with the status of the error that ended it).
 */
function kindOfExitCode(code: number): ErrorKind | null {
  if (code === 41) return "auth";
  if (code >= 144 && code <= 248) return classify({ status: code + 256, text: "" });
  return null;
}

/**
 * The common precedence, plus: a CLI that exited without a result event did not succeed, whatever its
 * exit code (gemini exits 0 when it is sent SIGTERM), and the exit code is evidence of the kind.
 */
function finalize(summary: StreamSummary, exit: ExitFacts): Outcome {
  return finalizeFromSummary(summary, exit, { needsFinal: true, kindOfExitCode });
}

const MESSAGE_FIELDS = ["input", "cached", "output", "thoughts", "tool"] as const;

/** A model message of the session file: its tokens once per id (tool-use prompt tokens are input). */
function parseSessionLine(line: string): ReturnType<UsageLog["parse"]> {
  if (!line.includes('"tokens"')) return null;
  const message = parseObject(line);
  const tokens = asRecord(message?.tokens);
  if (message === null || message.type !== "gemini" || tokens === null) return null;
  const f = tokenFields(tokens, MESSAGE_FIELDS);
  const use =
    typeof f === "string"
      ? f
      : modelUse(asString(message.model), {
          input: f.input + f.tool,
          cachedInput: f.cached,
          cacheWrite: 0,
          output: f.output + f.thoughts,
          reasoning: f.thoughts,
        });
  return { at: asString(message.timestamp), facts: usageFacts("message", asString(message.id), [use]) };
}

/** The session file of `thread`: <home>/.gemini/tmp/<project>/chats/session-*-<first 8 of its id>.jsonl. */
function locateSession(thread: string, context: UsageLogContext): string | null {
  const root = `${context.env.GEMINI_CLI_HOME ?? context.env.HOME ?? ""}/.gemini/tmp`;
  const suffix = `-${thread.slice(0, 8)}.jsonl`;
  for (const project of context.listDir(root)) {
    const chats = `${root}/${project}/chats`;
    for (const name of context.listDir(chats)) {
      if (!name.startsWith("session-") || !name.endsWith(suffix)) continue;
      const head = parseObject(context.firstLine(`${chats}/${name}`) ?? "");
      if (head?.sessionId === thread) return `${chats}/${name}`;
    }
  }
  return null;
}

/** gemini bills Google's prices; the model is --model (-m), else GEMINI_MODEL, else settings' model.name. */
function billing(context: BillingContext) {
  const home = context.env.GEMINI_CLI_HOME ?? context.env.HOME ?? "";
  const settings = parseObject(context.readText(`${home}/.gemini/settings.json`) ?? "");
  const configured = asString(asRecord(settings?.model)?.name) ?? asString(settings?.model);
  const model = flagValue(context.args, ["--model", "-m"]) ?? context.env.GEMINI_MODEL ?? configured;
  return { provider: "google", model };
}

export const geminiBackend: Backend = {
  id: "gemini",
  label: "gemini",
  command: "cli",
  defaultBin: "gemini",
  binEnv: "CATHERD_GEMINI_BIN",
  accountVariable: "GEMINI_CLI_HOME",
  // Its login: a Google sign-in writes oauth_creds.json in .gemini under GEMINI_CLI_HOME (else HOME); a key variable stands for one.
  login: {
    files: [
      {
        variable: "GEMINI_CLI_HOME",
        path: ".gemini/oauth_creds.json",
        underHome: ".gemini/oauth_creds.json",
      },
    ],
    variables: ["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"],
  },
  installHint: "npm install -g @google/gemini-cli",
  versionArgs: ["--version"],
  minVersion: "0.61.0",
  needsBrief: true,
  reportsUsage: true,
  plainText: false,
  answerSchemaFlag: false,
  // gemini exits right after its result line in every recording; 30 s is the common grace.
  defaults: { ...AGENT_DEFAULTS, graceAfterFinalMs: 30_000 },
  plan,
  parse,
  parseStderr,
  // init.session_id: a UUID. (`--resume` also takes "latest" or an index, which name no thread: not accepted.)
  checkThread: uuidThread("gemini"),
  finalize,
  billing,
  usageLog: { locate: locateSession, parse: parseSessionLine },
  steer: geminiSteer,
};
