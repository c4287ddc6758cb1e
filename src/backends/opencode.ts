import { inertText } from "../domain/text/inert-text.js";
import type { LineFacts } from "../domain/watch/facts.js";
import { PROGRESS } from "../domain/watch/facts.js";
import { errorFact } from "./classify.js";
import {
  AGENT_DEFAULTS,
  asId,
  asRecord,
  asString,
  describeToolCall,
  finalizeFromSummary,
  flagValue,
  oneLine,
  parseObject,
} from "./line-parsing.js";
import { isServeLine, parseServe } from "./opencode-serve.js";
import { bridgePlan, opencodeBin, opencodeSteer } from "./opencode-steer.js";
import { opencodeError, stepUsage } from "./opencode-steps.js";
import type { Backend, BillingContext, PlanRequest } from "./types.js";

// `opencode run --format json` (test/fixtures/recorded/opencode, opencode-ai 1.18.33). Every line has
// `sessionID` and a `part`. Each model step: step_start … step_finish{part.reason: tool-calls|stop,
// part.tokens, part.cost}. A tool call is one tool_use line written once it has finished, so no call is
// ever seen open: opencode never looks busy to the supervisor. The answer is a `text` line, written
// whole when the text part ends. Provider retries print nothing; a final failure is one `error` line.
//
// Failures (test/fixtures/recorded/opencode, specs/backends.md): the `error` line has `error.name` (APIError,
// ContextOverflowError), `data.statusCode`, the provider's message (`data.message`), its raw body
// (`data.responseBody`, with its code) and headers. A context overflow that compaction cannot fix loops:
// error → a compaction summary → a synthetic text with `metadata.compaction_continue` → error… A session
// that does not exist is stderr "Error: Session not found" (coloured even with NO_COLOR).
//
// Usage (specs/backends.md, "Usage and cost"): every step_finish carries the step's `tokens` and `cost`,
// summed over the steps. opencode prices tokens from its own model catalogue and says 0 for a model it
// has no price for: a step with tokens and a cost of 0 gives no figure (catherd prices it, if it can).

/**
 * Access levels → opencode's permission rules. OPENCODE_PERMISSION (JSON) is merged over every config
 * file, OPENCODE_CONFIG_CONTENT included; `opencode run` rejects whatever would ask, unless --auto.
 * - read-only: edit (which also covers write and patch) and bash denied, paths outside the folder
 *   denied — enforced by opencode.
 * - workspace-write: edits and bash allowed, paths outside the folder denied — enforced for the file
 *   tools; for bash only as far as opencode's parse of the command finds such paths (advisory).
 * - full: --auto approves every request that is not explicitly denied by the user's own config.
 */
const ACCESS_PERMISSION = {
  "read-only": { edit: "deny", bash: "deny", external_directory: "deny" },
  "workspace-write": { edit: "allow", bash: "allow", external_directory: "deny" },
} as const;

function plan(request: PlanRequest) {
  // --steerable: catherd's bridge, which runs `opencode serve` (opencode-steer.ts); every other dispatch
  // `run --format json`.
  if (request.steer != null) return bridgePlan(request, request.steer);
  // No message argument: when stdin is not a TTY, `opencode run` reads all of it as the message (a
  // message argument would be joined before it). A session is resumed with --session <id>.
  const args = ["run", "--format", "json"];
  const env: Record<string, string> = {};
  if (request.thread !== null) args.push("--session", request.thread);
  // opencode names models provider/model (e.g. anthropic/claude-sonnet-4-5); the value is passed as given.
  if (request.model !== null) args.push("--model", request.model);
  // --variant is opencode's provider-specific reasoning effort (e.g. high, max, minimal).
  if (request.effort !== null) args.push("--variant", request.effort);
  if (request.access === "full") args.push("--auto");
  else if (request.access !== null)
    env.OPENCODE_PERMISSION = JSON.stringify(ACCESS_PERMISSION[request.access]);
  args.push(...request.extraArgs);
  return { cmd: request.bin, args, env, stdin: "brief" as const };
}

function parsePart(type: unknown, part: Record<string, unknown>, event: Record<string, unknown>): LineFacts {
  switch (type) {
    case "step_start":
      return { progress: true, describe: "step started" };
    case "text": {
      const text = asString(part.text);
      // A synthetic text is opencode's, not the agent's; after a compaction it means the session goes on.
      if (part.synthetic === true) {
        const continues = asRecord(part.metadata)?.compaction_continue === true;
        if (!continues) return PROGRESS;
        // A new turn begins: what the compaction step said is not the answer.
        return {
          progress: true,
          continues,
          reply: { text: "", mode: "replace" },
          describe: "compacted, continuing",
        };
      }
      // A text part is written whole: every one after the last tool call is part of the answer.
      return text === null
        ? PROGRESS
        : { progress: true, reply: { text, mode: "message" }, describe: `says ${oneLine(text)}` };
    }
    case "reasoning":
      return { progress: true, describe: "thinking" };
    case "tool_use": {
      const state = asRecord(part.state);
      const label = describeToolCall(asString(part.tool) ?? "tool", asRecord(state?.input));
      // What the agent said before a tool call was narration: the reply is what it says after the last one.
      const reply = { text: "", mode: "replace" } as const;
      if (state?.status !== "error") return { progress: true, reply, describe: label };
      const failure = oneLine(asString(state.error) ?? "error");
      return { progress: true, reply, describe: `failed ${label}: ${failure}` };
    }
    case "step_finish": {
      const reason = asString(part.reason) ?? "unknown";
      const facts: LineFacts = { progress: true, ...stepUsage(asRecord(part.tokens) ?? {}, part.cost) };
      // "stop" ends `opencode run` (its loop goes on only after tool-calls); other reasons stay progress.
      if (reason === "stop") facts.final = { isError: false, message: null };
      facts.describe = `step finished (${reason})`;
      return facts;
    }
    case "error": {
      // The prompt failed (after opencode's own silent retries) and `opencode run` ends with exit 1.
      const at = typeof event.timestamp === "number" ? event.timestamp : null;
      const error = opencodeError(asRecord(event.error), at);
      return {
        progress: true,
        final: { isError: true, message: error.message },
        error,
        describe: `failed: ${oneLine(error.message)}`,
      };
    }
    default:
      return PROGRESS;
  }
}

function parse(line: string): LineFacts {
  const event = parseObject(line);
  if (event === null) return PROGRESS;
  if (isServeLine(event)) return parseServe(event);
  const facts = parsePart(event.type, asRecord(event.part) ?? {}, event);
  const thread = asId(event.sessionID);
  return thread === null ? facts : { ...facts, thread };
}

/**
 * opencode's stderr: its own "Error: …" (a session that does not exist), else diagnostics. Every line
 * stays progress, as stderr is for a backend that does not report retries there.
 */
function parseStderr(line: string): LineFacts {
  const text = inertText(line);
  if (!text.startsWith("Error: ")) return PROGRESS;
  return {
    progress: true,
    error: errorFact({ text: text.slice("Error: ".length) }),
    describe: oneLine(text),
  };
}

/** opencode's session ids: "ses_" and 26 letters and digits (accepted from 20 to 40). */
const SESSION_ID = /^ses_[0-9A-Za-z]{20,40}$/;

function checkThread(id: string): string | null {
  return SESSION_ID.test(id)
    ? null
    : `an opencode thread is a session id such as ses_dd2f8c1b9ffe61TIhHsywNFVw1, not ${JSON.stringify(oneLine(id, 80))}`;
}

/**
 * opencode names models provider/model: the provider (its id, which for the big providers is the price
 * table's) and model of --model, else of `model` in OPENCODE_CONFIG_CONTENT or its config file.
 */
function billing(context: BillingContext) {
  const config = parseObject(context.env.OPENCODE_CONFIG_CONTENT ?? "");
  const dir = context.env.XDG_CONFIG_HOME ?? `${context.env.HOME ?? ""}/.config`;
  const file = parseObject(context.readText(`${dir}/opencode/opencode.json`) ?? "");
  const named =
    flagValue(context.args, ["--model", "-m"]) ?? asString(config?.model) ?? asString(file?.model);
  const slash = named?.indexOf("/") ?? -1;
  if (named === null || slash <= 0) return { provider: null, model: named };
  return { provider: named.slice(0, slash), model: named.slice(slash + 1) };
}

export const opencodeBackend: Backend = {
  id: "opencode",
  label: "opencode",
  command: "cli",
  defaultBin: "opencode",
  binEnv: "CATHERD_OPENCODE_BIN",
  accountVariable: "XDG_DATA_HOME",
  // Its login: `opencode auth login` writes auth.json in its data folder; a provider's key variable stands for one.
  login: {
    files: [
      { variable: "XDG_DATA_HOME", path: "opencode/auth.json", underHome: ".local/share/opencode/auth.json" },
    ],
    variables: [
      "ANTHROPIC_API_KEY",
      "OPENAI_API_KEY",
      "GEMINI_API_KEY",
      "GOOGLE_GENERATIVE_AI_API_KEY",
      "OPENROUTER_API_KEY",
    ],
  },
  installHint: "npm install -g opencode-ai",
  versionArgs: ["--version"],
  minVersion: "1.18.33",
  needsBrief: true,
  reportsUsage: true,
  plainText: false,
  answerSchemaFlag: false,
  // opencode exits once its session goes idle, right after the last step; 30 s is the common grace.
  defaults: { ...AGENT_DEFAULTS, graceAfterFinalMs: 30_000 },
  plan,
  parse,
  parseStderr,
  checkThread,
  finalize: (summary, exit) => finalizeFromSummary(summary, exit),
  billing,
  steer: opencodeSteer,
  cliBin: opencodeBin,
};
