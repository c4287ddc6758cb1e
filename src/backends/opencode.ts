import type { LineFacts } from "../domain/facts.js";
import { PROGRESS } from "../domain/facts.js";
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
import type { Backend, PlanRequest } from "./types.js";

// `opencode run --format json` (shared/fixtures/opencode, opencode-ai 1.18.33). Every line has
// `sessionID` and a `part`. Each model step: step_start … step_finish{part.reason: tool-calls|stop,
// part.tokens, part.cost}. A tool call is one tool_use line written once it has finished, so no call is
// ever seen open: opencode never looks busy to the supervisor. The answer is a `text` line, written
// whole when the text part ends. Provider retries print nothing; a final failure is one `error` line.

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

/**
 * One step's usage. opencode's tokens.input excludes cache reads and writes and tokens.output excludes
 * reasoning (it subtracts them from the provider's counts); catherd's input and output include them.
 */
function stepUsage(tokens: Record<string, unknown>) {
  const cache = asRecord(tokens.cache) ?? {};
  const read = asCount(cache.read);
  return {
    input: asCount(tokens.input) + read + asCount(cache.write),
    cached: read,
    output: asCount(tokens.output) + asCount(tokens.reasoning),
  };
}

function errorMessage(error: Record<string, unknown> | null): { message: string; status: number | null } {
  const data = asRecord(error?.data);
  const name = asString(error?.name) ?? "error";
  const detail = asString(data?.message);
  const status = typeof data?.statusCode === "number" ? data.statusCode : null;
  const head = status === null ? name : `${name} ${status}`;
  return { message: detail === null ? head : `${head}: ${detail}`, status };
}

function parsePart(type: unknown, part: Record<string, unknown>, event: Record<string, unknown>): LineFacts {
  switch (type) {
    case "step_start":
      return { progress: true, describe: "step started" };
    case "text": {
      const text = asString(part.text);
      // Each step is a message of its own; a text part is written whole, so the last one is the answer.
      return text === null
        ? PROGRESS
        : { progress: true, reply: { text, mode: "replace" }, describe: `says ${oneLine(text)}` };
    }
    case "reasoning":
      return { progress: true, describe: "thinking" };
    case "tool_use": {
      const state = asRecord(part.state);
      const label = describeToolCall(asString(part.tool) ?? "tool", asRecord(state?.input));
      if (state?.status !== "error") return { progress: true, describe: label };
      return { progress: true, describe: `failed ${label}: ${oneLine(asString(state.error) ?? "error")}` };
    }
    case "step_finish": {
      const reason = asString(part.reason) ?? "unknown";
      const facts: LineFacts = { progress: true, usage: stepUsage(asRecord(part.tokens) ?? {}) };
      if (typeof part.cost === "number" && Number.isFinite(part.cost)) facts.costUsd = part.cost;
      // "stop" ends `opencode run` (its loop goes on only after tool-calls); other reasons stay progress.
      if (reason === "stop") facts.final = { isError: false, message: null };
      facts.describe = `step finished (${reason})`;
      return facts;
    }
    case "error": {
      // The prompt failed (after opencode's own silent retries) and `opencode run` ends with exit 1.
      const { message, status } = errorMessage(asRecord(event.error));
      return {
        progress: true,
        final: { isError: true, message },
        error: message,
        limit: status === 429 || LIMIT_WORDING.test(message),
        describe: `failed: ${oneLine(message)}`,
      };
    }
    default:
      return PROGRESS;
  }
}

function parse(line: string): LineFacts {
  const event = parseObject(line);
  if (event === null) return PROGRESS;
  const facts = parsePart(event.type, asRecord(event.part) ?? {}, event);
  const thread = asId(event.sessionID);
  return thread === null ? facts : { ...facts, thread };
}

export const opencodeBackend: Backend = {
  id: "opencode",
  label: "opencode",
  command: "cli",
  defaultBin: "opencode",
  binEnv: "CATHERD_OPENCODE_BIN",
  installHint: "npm install -g opencode-ai",
  versionArgs: ["--version"],
  needsBrief: true,
  plainText: false,
  // opencode exits once its session goes idle, right after the last step; 30 s is the common grace.
  defaults: { ...AGENT_DEFAULTS, graceAfterFinalMs: 30_000 },
  plan,
  parse,
  finalize: finalizeFromSummary,
};
