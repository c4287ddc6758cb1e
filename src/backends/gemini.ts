import type { LineFacts } from "../domain/facts.js";
import { NEUTRAL, PROGRESS } from "../domain/facts.js";
import type { ExitFacts } from "../domain/status.js";
import type { StreamSummary } from "../domain/summary.js";
import {
  AGENT_DEFAULTS,
  asCount,
  asId,
  asRecord,
  asString,
  describeToolCall,
  finalizeFromSummary,
  LIMIT_WORDING,
  oneLine,
  parseObject,
} from "./common.js";
import type { Backend, Outcome, PlanRequest } from "./types.js";

// `gemini --output-format stream-json` (shared/fixtures/gemini, gemini-cli 0.61.0).
// init{session_id} → message{role:user} → tool_use{tool_id} → tool_result{tool_id, status} →
// message{role:assistant, content, delta:true}… → result{status: success|error, error?, stats}.
// Provider retries appear only on stderr ("Attempt n failed with status 500. Retrying with backoff…",
// each followed by a stack trace). Exit codes lie (244 after 500s, 173 after 429s, 0 on SIGTERM):
// result.status decides.

/**
 * Access levels → --approval-mode. Headless gemini turns every "ask the user" policy decision into a
 * deny, so these are enforced by gemini's policy engine:
 * - read-only: default — tools that need approval (shell, edit, write_file) are denied.
 * - workspace-write: auto_edit — edit tools run (gemini's file tools refuse paths outside the workspace
 *   directories); the shell still needs approval and is therefore denied: no tests or builds.
 * - full: yolo — everything runs. (`plan` is not used for read-only: headless plan mode approves its own
 *   exit_plan_mode and goes on to implement.)
 */
const ACCESS_FLAGS = {
  "read-only": ["--approval-mode", "default"],
  "workspace-write": ["--approval-mode", "auto_edit"],
  full: ["--approval-mode", "yolo"],
} as const;

function plan(request: PlanRequest) {
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

function parseResult(event: Record<string, unknown>): LineFacts {
  const stats = asRecord(event.stats) ?? {};
  // stats.input_tokens is the prompt count including cached tokens (stats.input excludes them).
  const usage = {
    input: asCount(stats.input_tokens),
    cached: asCount(stats.cached),
    output: asCount(stats.output_tokens),
  };
  if (event.status === "success") {
    return { progress: true, final: { isError: false, message: null }, usage, describe: "finished" };
  }
  const error = asRecord(event.error);
  const message = asString(error?.message) ?? `gemini result status ${String(event.status)}`;
  const kind = asString(error?.type) ?? "";
  return {
    progress: true,
    final: { isError: true, message },
    usage,
    error: message,
    limit: LIMIT_WORDING.test(`${kind} ${message}`),
    describe: `failed: ${oneLine(message)}`,
  };
}

function parse(line: string): LineFacts {
  const event = parseObject(line);
  if (event === null) return PROGRESS;
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
      // the result line says how the session ended, and a successful one outweighs a limit seen here.
      const message = asString(event.message) ?? "error";
      if (event.severity !== "error") return { progress: true, describe: oneLine(message) };
      return {
        progress: true,
        error: message,
        limit: LIMIT_WORDING.test(message),
        describe: oneLine(message),
      };
    }
    case "result":
      return parseResult(event);
    default:
      return PROGRESS;
  }
}

const RETRYING = /^Attempt (\d+) failed(?: with status (\d+))?\. Retrying with backoff/;
const GAVE_UP = /^Attempt (\d+) failed: (.*?)\.? Max attempts reached/;
const REPORT = /^Error when talking to Gemini API/;

/**
 * gemini's stderr: retries (not progress), the final give-up (an error), and otherwise diagnostics —
 * retry traces, start-up notices ("[STARTUP] …", "YOLO mode is enabled…", colour warnings). gemini
 * reports its work on stdout, so no stderr line is progress: a start-up notice printed between two retry
 * attempts (seen with the real CLI) must not reset the retry streak.
 */
function parseStderr(line: string): LineFacts {
  const retry = RETRYING.exec(line);
  if (retry !== null) {
    const attempt = Number(retry[1]);
    const status = retry[2] === undefined ? null : Number(retry[2]);
    const message = oneLine(line, 200);
    const suffix = status === null ? "" : ` (HTTP ${status})`;
    // gemini does not print its maximum (10 by default): max stays unknown.
    return {
      progress: false,
      retry: { attempt, max: null, message },
      describe: `retrying ${attempt}${suffix}`,
    };
  }
  const gaveUp = GAVE_UP.exec(line);
  if (gaveUp !== null) {
    const message = gaveUp[2] ?? line;
    return {
      progress: true,
      error: message,
      limit: LIMIT_WORDING.test(message),
      describe: `gave up after ${gaveUp[1]} attempts`,
    };
  }
  if (REPORT.test(line)) return { progress: true, error: line, limit: LIMIT_WORDING.test(line) };
  return NEUTRAL;
}

/**
 * The common precedence, plus: a CLI that exited without a result event did not succeed, whatever its
 * exit code (gemini exits 0 when it is sent SIGTERM). An empty reply (only narration before tools) is null.
 */
function finalize(summary: StreamSummary, exit: ExitFacts): Outcome {
  const outcome = finalizeFromSummary(summary, exit);
  const reply = outcome.reply === "" ? null : outcome.reply;
  if (exit.reason === "exited" && summary.final === null && outcome.status === "ok") {
    const code = exit.code === null ? "" : ` (exit code ${exit.code})`;
    const message = summary.lastError ?? `gemini exited without a result event${code}`;
    return { ...outcome, reply, status: "failed", error: { code: exit.reason, message } };
  }
  return { ...outcome, reply };
}

export const geminiBackend: Backend = {
  id: "gemini",
  label: "gemini",
  command: "cli",
  defaultBin: "gemini",
  binEnv: "CATHERD_GEMINI_BIN",
  installHint: "npm install -g @google/gemini-cli",
  versionArgs: ["--version"],
  needsBrief: true,
  plainText: false,
  // gemini exits right after its result line in every recording; 30 s is the common grace.
  defaults: { ...AGENT_DEFAULTS, graceAfterFinalMs: 30_000 },
  plan,
  parse,
  parseStderr,
  finalize,
};
