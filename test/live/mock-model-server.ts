import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";

// catherd's own scripted mock model server for the live contract suite (specs/live-suite.md).
// It listens on 127.0.0.1 only, on a random port, and speaks the four wire protocols the real CLIs use:
//
// - the OpenAI Responses API (codex, `wire_api = "responses"`): POST …/responses, SSE events
//   response.created → response.output_item.added → response.output_text.delta →
//   response.output_item.done → response.completed{response.usage}. The event shapes follow codex's own
//   mock-server helpers (openai/codex codex-rs/core/tests/common/responses.rs: ev_response_created,
//   ev_function_call, ev_local_shell_call, ev_assistant_message, ev_completed).
// - OpenAI Chat Completions (opencode's @ai-sdk/openai-compatible provider): POST …/chat/completions,
//   `data: {chat.completion.chunk}` lines with delta.content / delta.tool_calls, a usage object, `[DONE]`.
// - the Anthropic Messages API (claude): POST …/v1/messages, SSE message_start → content_block_start →
//   content_block_delta (text_delta | input_json_delta) → content_block_stop → message_delta → message_stop;
//   a JSON message when the request does not ask for a stream; …/v1/messages/count_tokens.
// - Gemini (gemini-cli): POST …/models/<model>:streamGenerateContent?alt=sse (`data: {candidates, usageMetadata}`
//   chunks), :generateContent (one JSON answer), :countTokens.
//
// The scenario is the path segment after /s/: a base URL http://127.0.0.1:PORT/s/<scenario> (plus whatever
// prefix the CLI expects, e.g. /v1) selects it. Turns are decided from the conversation the request
// carries, not from a counter, so retries and the CLIs' side requests (titles, quota probes, counts)
// never shift the script: a request that ends with a tool result gets the final text; one that offers
// a shell tool gets the scripted call; one that offers no tool gets a short text.

export type Scenario =
  | "tool"
  | "text"
  | "outcome"
  | "always500"
  | "always429"
  | "hang"
  | "orphan"
  | "auth401"
  | "ratelimit-long"
  | "model404"
  | "context400"
  | "answer"
  | "steer"
  | "sandbox"
  | "window"
  | "window-rejected"
  | "verify";
export const SCENARIOS: readonly Scenario[] = [
  "tool",
  "text",
  "outcome",
  "always500",
  "always429",
  "hang",
  "orphan",
  "auth401",
  "ratelimit-long",
  "model404",
  "context400",
  "answer",
  "steer",
  "sandbox",
  "window",
  "window-rejected",
  "verify",
];

/**
 * The `answer` scenario (specs/live-suite.md): the model's first answer does not fit ANSWER_SCHEMA; asked
 * again — by catherd's repair brief on the same thread, or by Claude's StructuredOutput tool error — it
 * answers one that does. What the request carried of the schema is noted: `output-schema` (codex's
 * text.format json_schema), `structured-output-tool` (claude's StructuredOutput tool), `contract` (the
 * brief's contract: gemini, opencode), else `none`.
 */
export const ANSWER_SCHEMA = {
  type: "object",
  properties: { verdict: { enum: ["pass", "fail"] }, count: { type: "integer" } },
  required: ["verdict", "count"],
  additionalProperties: false,
};
export const INVALID_ANSWER = { verdict: "maybe", count: 1 };
export const VALID_ANSWER = { verdict: "pass", count: 2 };
/** Words of catherd's repair brief (src/domain/ending/answer-contract.ts) and of its contract, as the model reads them. */
const REPAIR_WORDS = "did not fit the JSON Schema";
const CONTRACT_WORDS = "only a JSON value that is valid against the JSON";

/**
 * The `verify` scenario (specs/live-suite.md): the model says it is done without touching anything; told by
 * catherd's repair brief that the check failed, it writes the fix with its shell tool, then says done.
 */
const CHECK_REPAIR_WORDS = "The check that judges your work failed";
/** What the `verify` scenario's repair turn runs: the file the live test's check looks for. */
export const VERIFY_FIX_COMMAND = "echo fixed > fixed.txt";

function verifyTurn(
  said: string,
  toolResult: string | null,
  shellTool: string | null,
  entry: LoggedRequest,
): Turn {
  if (toolResult !== null) {
    entry.answer = "final";
    return { kind: "text", text: `${FINAL_MARKER}: fixed` };
  }
  if (shellTool !== null && said.includes(CHECK_REPAIR_WORDS)) {
    entry.answer = "tool-call";
    entry.note = "repair";
    return { kind: "tool", tool: shellTool, command: VERIFY_FIX_COMMAND };
  }
  entry.answer = shellTool === null ? "text" : "final";
  return { kind: "text", text: shellTool === null ? "Live test" : `${FINAL_MARKER}: done, all tests pass` };
}

/** The `answer` scenario's turn for a model request that offers tools (`said`: the request's JSON). */
function answerTurn(said: string, shellTool: string | null, entry: LoggedRequest): Turn {
  if (shellTool === null) {
    entry.answer = "text";
    return { kind: "text", text: "Live test" };
  }
  entry.note = said.includes('"json_schema"')
    ? "output-schema"
    : said.includes(CONTRACT_WORDS)
      ? "contract"
      : "none";
  const repaired = said.includes(REPAIR_WORDS);
  entry.answer = repaired ? "answer-valid" : "answer-invalid";
  return { kind: "text", text: JSON.stringify(repaired ? VALID_ANSWER : INVALID_ANSWER) };
}

/**
 * A scenario whose usage figures the test sets (specs/live-suite.md, "spend"): `spend~<input>~<output>~<calls>`
 * calls the shell tool `calls` times (each `sleep 1; echo step`), then answers; every model request
 * reports `input` prompt tokens (half of them read from the cache) and `output` output tokens.
 */
export interface SpendPlan {
  input: number;
  output: number;
  calls: number;
}

/** The scenario path segment of a spend plan. */
export function spendScenario(plan: SpendPlan): string {
  return `spend~${plan.input}~${plan.output}~${plan.calls}`;
}

function spendPlanOf(scenario: string): SpendPlan | null {
  const m = /^spend~(\d+)~(\d+)~(\d+)$/.exec(scenario);
  return m === null ? null : { input: Number(m[1]), output: Number(m[2]), calls: Number(m[3]) };
}

/** Usage one model request reports: its prompt tokens, the part of them read from the cache, its output. */
interface RequestUsage {
  input: number;
  cached: number;
  output: number;
}

function usageOf(scenario: string): RequestUsage {
  const plan = spendPlanOf(scenario);
  return plan === null
    ? { ...USAGE, cached: 0 }
    : { input: plan.input, cached: Math.floor(plan.input / 2), output: plan.output };
}

/** The shell command each tool scenario asks the CLI to run. */
export const SCENARIO_COMMANDS: Partial<Record<Scenario, string>> = {
  tool: "echo hi",
  outcome: "echo hi",
  // Started in the background with its output detached, so the tool call returns at once and the
  // sleep outlives it; `echo` reports its pid so the test can prove it existed and is gone.
  orphan: "sleep 1000 > /dev/null 2>&1 & echo started $!",
  // Inside a sandbox (test/live/sandbox.live.ts): a planted secret the sandbox hides, a host it refuses.
  sandbox:
    'cat "$SANDBOX_SECRET_FILE" || echo secret-hidden; node "$SANDBOX_PROBE" "proxy:$SANDBOX_REFUSED_URL"; echo sandbox-done',
  window: "echo hi",
};

/** Every final answer starts with this marker; the tool's output (as the CLI reported it) follows. */
export const FINAL_MARKER = "LIVE-OK";

/** The outcome line the `outcome` scenario's final answer ends with (`dispatch --outcome`). */
export const OUTCOME_LINE = "STATUS: partial — the mock model stops after one command";

export type Api =
  | "responses"
  | "chat"
  | "anthropic"
  | "anthropic-count"
  | "gemini"
  | "gemini-count"
  | "models";

export interface LoggedRequest {
  at: number;
  method: string;
  url: string;
  scenario: string | null;
  api: Api | null;
  /** What the server did: "tool-call", "final", "text", "500", "hang", "count", "models", "unexpected". */
  answer: string;
  /** The tool name chosen, or why none was. */
  note?: string;
  /**
   * `steer` only: the text of every user and system message the request carried, in order (tool results
   * and system reminders left out), so that a test can see what the model was told.
   */
  said?: string[];
  /** `steer` only: the CLI's session the request belongs to (Claude's X-Claude-Code-Session-Id). */
  session?: string | null;
}

/**
 * A scripted conversation with one MCP server's tools: the calls in order, one per turn, then a final
 * text holding the last call's result (`SCRIPTED_MARKER: <result>`). For claude the tool is named
 * `mcp__<server>__<tool>`; for codex it is a function call `<tool>` in the namespace `mcp__<server>`
 * (fixtures README, "MCP servers, headless").
 */
export interface ToolScript {
  server: string;
  calls: { tool: string; input: Record<string, unknown> }[];
}

/** The final text of a tool script starts with this marker; the last call's result follows. */
export const SCRIPTED_MARKER = "SCRIPT-DONE";

export interface MockModelServer {
  /** http://127.0.0.1:PORT */
  origin: string;
  /** http://127.0.0.1:PORT/s/<scenario> (a spend plan's scenario too: spendScenario) */
  baseUrl(scenario: Scenario | string): string;
  /** Registers a tool script; returns its base URL (http://127.0.0.1:PORT/s/script-<name>). */
  script(name: string, script: ToolScript): string;
  requests: LoggedRequest[];
  /** Requests to paths the server does not know (also printed to stderr). */
  unexpected: LoggedRequest[];
  close(): Promise<void>;
}

/** HTTP 500 bodies, in each API's own error shape. */
const ERROR_BODIES: Record<Api, unknown> = {
  responses: { error: { message: "mock: internal error", type: "server_error", code: "server_error" } },
  chat: {
    error: { message: "mock: internal error", type: "server_error", param: null, code: "server_error" },
  },
  anthropic: { type: "error", error: { type: "api_error", message: "mock: internal error" } },
  "anthropic-count": { type: "error", error: { type: "api_error", message: "mock: internal error" } },
  gemini: { error: { code: 500, message: "mock: internal error", status: "INTERNAL" } },
  "gemini-count": { error: { code: 500, message: "mock: internal error", status: "INTERNAL" } },
  models: { error: { message: "mock: internal error" } },
};

/** A provider's refusal of a request: its status, body and headers, in one API's own shape. */
interface Refusal {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** The time a long rate limit resets: an hour after the request. */
const resetIn = () => new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z");

const openai = (
  status: number,
  message: string,
  type: string,
  code: string,
  param: string | null = null,
) => ({
  status,
  body: { error: { message, type, param, code } },
});
const anthropic = (status: number, type: string, message: string) => ({
  status,
  body: { type: "error", error: { type, message } },
});
const google = (code: number, status: string, message: string, details?: unknown[]) => ({
  status: code,
  body: { error: { code, message, status, ...(details === undefined ? {} : { details }) } },
});

/** Unix seconds `hours` from now: a window's reset as the providers' headers give it. */
const resetSeconds = (hours: number) => String(Math.floor(Date.now() / 1000 + hours * 3600));

/**
 * The `window` scenario's rate-limit headers (specs/live-suite.md, "Quota windows"), as each provider
 * sends them on every answer and as the pinned CLIs read them (their bundle or binary names each one):
 * Anthropic's unified limit, which Claude Code reads only under a claude.ai login — allowed, its
 * representative claim the weekly window, until the conversation holds a tool result, then a warning of
 * the five-hour window at 91 % (`-5h-utilization` with `-5h-surpassed-threshold`); codex's primary (five
 * hours, 42.5 %) and secondary (a week, 12 %) windows. Gemini reads none.
 */
export function windowHeaders(api: Api, body: Record<string, unknown>): Record<string, string> {
  if (api === "responses") return codexWindowHeaders(42.5);
  if (api !== "anthropic") return {};
  const warned = JSON.stringify(body.messages ?? []).includes('"tool_result"');
  if (!warned) {
    return {
      "anthropic-ratelimit-unified-status": "allowed",
      "anthropic-ratelimit-unified-reset": resetSeconds(72),
      "anthropic-ratelimit-unified-representative-claim": "seven_day",
    };
  }
  return {
    "anthropic-ratelimit-unified-status": "allowed_warning",
    "anthropic-ratelimit-unified-reset": resetSeconds(1),
    "anthropic-ratelimit-unified-representative-claim": "five_hour",
    "anthropic-ratelimit-unified-5h-utilization": "0.91",
    "anthropic-ratelimit-unified-5h-reset": resetSeconds(1),
    "anthropic-ratelimit-unified-5h-surpassed-threshold": "0.9",
  };
}

function codexWindowHeaders(primaryUsed: number): Record<string, string> {
  return {
    "x-codex-primary-used-percent": String(primaryUsed),
    "x-codex-primary-window-minutes": "300",
    "x-codex-primary-reset-at": resetSeconds(1),
    "x-codex-secondary-used-percent": "12",
    "x-codex-secondary-window-minutes": "10080",
    "x-codex-secondary-reset-at": resetSeconds(72),
  };
}

/**
 * `window-rejected`: a spent plan, an hour before its reset. Anthropic: a 429 whose unified status is
 * `rejected` (Claude Code then says "You've hit your session limit"); codex: a 429 `usage_limit_reached`
 * with its reset, its primary window at 100 %; Gemini: a 429 whose QuotaFailure names a per-day quota.
 */
function windowRejected(api: Api): Refusal {
  const reset = resetSeconds(1);
  if (api === "anthropic" || api === "anthropic-count") {
    return {
      ...anthropic(429, "rate_limit_error", "Number of requests has exceeded your rate limit."),
      headers: {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-reset": reset,
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
      },
    };
  }
  if (api === "gemini" || api === "gemini-count") {
    return google(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan.", [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        violations: [{ quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier", quotaValue: "250" }],
      },
    ]);
  }
  const error = {
    type: "usage_limit_reached",
    message: "The usage limit has been reached",
    plan_type: "plus",
  };
  return {
    status: 429,
    body: { error: { ...error, resets_at: Number(reset) } },
    headers: codexWindowHeaders(100),
  };
}

/**
 * The failure scenarios (specs/live-suite.md): every request of the run gets the refusal, in the shape
 * and with the words the real providers use (specs/backends.md, "Failures"). Each is a function:
 * a rate limit's reset time is an hour after the request.
 */
const REFUSALS: Partial<Record<Scenario, (api: Api) => Refusal>> = {
  auth401: (api) =>
    api === "anthropic" || api === "anthropic-count"
      ? anthropic(401, "authentication_error", "invalid x-api-key")
      : api === "gemini" || api === "gemini-count"
        ? google(
            401,
            "UNAUTHENTICATED",
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
            [
              {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                reason: "ACCESS_TOKEN_EXPIRED",
                domain: "googleapis.com",
              },
            ],
          )
        : openai(
            401,
            "Incorrect API key provided: live-dummy. You can find your API key at https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            "invalid_api_key",
          ),
  // A rate limit that names no time to come back: the CLI gives up after its own retries, if any.
  always429: (api) =>
    api === "anthropic" || api === "anthropic-count"
      ? anthropic(
          429,
          "rate_limit_error",
          "This request would exceed your organization's rate limit of 50 requests per minute.",
        )
      : api === "gemini" || api === "gemini-count"
        ? google(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")
        : openai(
            429,
            "Rate limit reached for mock-model on requests per min (RPM): Limit 3, Used 3, Requested 1.",
            "requests",
            "rate_limit_exceeded",
          ),
  "ratelimit-long": (api) => {
    const headers = { "retry-after": "3600" };
    if (api === "anthropic" || api === "anthropic-count") {
      const reset = resetIn();
      return {
        ...anthropic(
          429,
          "rate_limit_error",
          `This request would exceed your organization's rate limit of 50 requests per minute. The limit resets at ${reset}.`,
        ),
        headers: { ...headers, "anthropic-ratelimit-requests-reset": reset },
      };
    }
    if (api === "gemini" || api === "gemini-count") {
      return {
        ...google(
          429,
          "RESOURCE_EXHAUSTED",
          "Resource has been exhausted (e.g. check quota). Please retry in 3600s.",
          [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "3600s" }],
        ),
        headers,
      };
    }
    return {
      ...openai(
        429,
        "Rate limit reached for mock-model on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 1h0m0s.",
        "requests",
        "rate_limit_exceeded",
      ),
      headers: { ...headers, "x-ratelimit-reset-requests": "1h0m0s" },
    };
  },
  "window-rejected": (api) => windowRejected(api),
  model404: (api) =>
    api === "anthropic" || api === "anthropic-count"
      ? anthropic(404, "not_found_error", "model: mock-model")
      : api === "gemini" || api === "gemini-count"
        ? google(
            404,
            "NOT_FOUND",
            "models/gemini-2.5-flash is not found for API version v1beta, or is not supported for generateContent.",
          )
        : openai(
            404,
            "The model `mock-model` does not exist or you do not have access to it.",
            "invalid_request_error",
            "model_not_found",
          ),
  context400: (api) =>
    api === "anthropic" || api === "anthropic-count"
      ? anthropic(400, "invalid_request_error", "prompt is too long: 215000 tokens > 200000 maximum")
      : api === "gemini" || api === "gemini-count"
        ? google(
            400,
            "INVALID_ARGUMENT",
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
          )
        : api === "chat"
          ? openai(
              400,
              "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
              "invalid_request_error",
              "context_length_exceeded",
              "messages",
            )
          : openai(
              400,
              "Your input exceeds the context window of this model. Please adjust your input and try again.",
              "invalid_request_error",
              "context_length_exceeded",
              "input",
            ),
};

const USAGE = { input: 1200, output: 34 };

export interface MockOptions {
  /** Do not print unexpected requests to stderr. */
  quiet?: boolean;
  /** Write every request (method, url, headers, body) to <dumpDir>/<n>-<api>.json, for debugging. */
  dumpDir?: string;
}

export async function startMockModelServer(options: MockOptions = {}): Promise<MockModelServer> {
  const requests: LoggedRequest[] = [];
  const unexpected: LoggedRequest[] = [];
  const scripts = new Map<string, ToolScript>();
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}_mock${Date.now().toString(36)}${(counter++).toString(36)}`;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: Record<string, unknown> = {};
      try {
        const parsed: unknown = raw.length > 0 ? JSON.parse(raw) : {};
        if (isRecord(parsed)) body = parsed;
      } catch {
        // not JSON: treated as an empty request
      }
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const match = /^\/s\/([^/]+)(\/.*)?$/.exec(url.pathname);
      const scenario = match?.[1] ?? null;
      const rest = match?.[2] ?? "";
      const api = apiOf(req.method ?? "GET", rest);
      const entry: LoggedRequest = {
        at: Date.now(),
        method: req.method ?? "?",
        url: req.url ?? "",
        scenario,
        api,
        answer: "",
      };
      requests.push(entry);
      if (scenario === "steer") {
        const session = req.headers["x-claude-code-session-id"];
        entry.session = typeof session === "string" ? session : null;
      }
      if (options.dumpDir !== undefined) {
        fs.mkdirSync(options.dumpDir, { recursive: true });
        const file = path.join(
          options.dumpDir,
          `${String(requests.length).padStart(3, "0")}-${api ?? "unknown"}.json`,
        );
        fs.writeFileSync(
          file,
          JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }, null, 1),
        );
      }

      if (req.method === "HEAD" && scenario !== null) {
        // claude's connectivity probe (HEAD on the base URL): answered in every scenario, since it is
        // not a model request.
        entry.answer = "probe";
        res.writeHead(200);
        res.end();
        return;
      }
      const toolScript = scenario === null ? undefined : scripts.get(scenario);
      if (toolScript !== undefined && api !== null) {
        try {
          scriptedAnswer(api, toolScript, body, res, entry, nextId);
        } catch (error) {
          entry.answer = "unexpected";
          entry.note = String(error);
          unexpected.push(entry);
          if (!res.headersSent) sendJson(res, 500, ERROR_BODIES[api]);
          else res.end();
        }
        return;
      }
      const known =
        scenario !== null && (SCENARIOS.includes(scenario as Scenario) || spendPlanOf(scenario) !== null);
      if (scenario === null || api === null || !known) {
        entry.answer = "unexpected";
        unexpected.push(entry);
        if (options.quiet !== true)
          process.stderr.write(`mock-model-server: unexpected ${entry.method} ${entry.url}\n`);
        sendJson(res, 404, { error: { message: `mock: no route for ${entry.method} ${url.pathname}` } });
        return;
      }
      const script = scenario as Scenario;
      if (script === "hang") {
        // Accept and never answer: the socket stays open until the client gives up or the server closes.
        entry.answer = "hang";
        return;
      }
      const refusal = REFUSALS[script]?.(api);
      if (refusal !== undefined && api !== "models") {
        entry.answer = String(refusal.status);
        sendJson(res, refusal.status, refusal.body, refusal.headers ?? {});
        return;
      }
      if (script === "always500") {
        entry.answer = "500";
        // opencode retries 500s silently (nothing on stdout) with a backoff of 2 s doubling, about 85 s
        // in all, unless the answer says when to retry: its Retry-After-Ms is honoured. The other CLIs
        // print each retry, and keep their own (unhinted) backoff so that the supervisor sees them.
        sendJson(res, 500, ERROR_BODIES[api], api === "chat" ? { "retry-after-ms": "100" } : {});
        return;
      }
      if (script === "window") {
        for (const [name, value] of Object.entries(windowHeaders(api, body))) res.setHeader(name, value);
      }
      try {
        answer(api, script, body, url, res, entry, nextId);
      } catch (error) {
        entry.answer = "unexpected";
        entry.note = String(error);
        unexpected.push(entry);
        if (!res.headersSent) sendJson(res, 500, ERROR_BODIES[api]);
        else res.end();
      }
    });
  });

  // A CLI pointed at this server as its HTTPS proxy (the subscription login's guard: nothing it sends may
  // leave loopback): every tunnel it asks for is refused and logged as unexpected.
  server.on("connect", (req, socket) => {
    const entry: LoggedRequest = {
      at: Date.now(),
      method: "CONNECT",
      url: req.url ?? "",
      scenario: null,
      api: null,
      answer: "unexpected",
    };
    requests.push(entry);
    unexpected.push(entry);
    if (options.quiet !== true) process.stderr.write(`mock-model-server: refused CONNECT ${entry.url}\n`);
    socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    baseUrl: (scenario) => `${origin}/s/${scenario}`,
    script: (name, script) => {
      scripts.set(`script-${name}`, script);
      return `${origin}/s/script-${name}`;
    },
    requests,
    unexpected,
    close: () =>
      new Promise<void>((resolve) => {
        // Hanging requests keep their sockets open: drop every connection, then wait for the close.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function apiOf(method: string, rest: string): Api | null {
  if (method === "GET" && /\/models\/?$/.test(rest)) return "models";
  if (method !== "POST") return null;
  if (/\/responses$/.test(rest)) return "responses";
  if (/\/chat\/completions$/.test(rest)) return "chat";
  if (/\/messages\/count_tokens$/.test(rest)) return "anthropic-count";
  if (/\/messages$/.test(rest)) return "anthropic";
  if (/:streamGenerateContent$/.test(rest) || /:generateContent$/.test(rest)) return "gemini";
  if (/:countTokens$/.test(rest)) return "gemini-count";
  return null;
}

/** What a scripted turn does: call the shell, say the final text, or just say something. */
type Turn = { kind: "tool"; tool: string; command: string } | { kind: "text"; text: string };

/**
 * The turn for a request: after a tool result → the final text (with the tool's output); a tool
 * scenario offered a shell tool → the call; otherwise (text scenario, side requests without tools) → text.
 */
function turnFor(
  scenario: Scenario,
  toolResult: string | null,
  shellTool: string | null,
  entry: LoggedRequest,
  results = 0,
  said = "",
): Turn {
  if (scenario === "answer") return answerTurn(said, shellTool, entry);
  if (scenario === "verify") return verifyTurn(said, toolResult, shellTool, entry);
  const plan = spendPlanOf(scenario);
  if (plan !== null) {
    if (results < plan.calls && shellTool !== null) {
      entry.answer = "tool-call";
      entry.note = `${shellTool} ${results + 1}/${plan.calls}`;
      return { kind: "tool", tool: shellTool, command: `sleep 1; echo step ${results + 1}` };
    }
    entry.answer = shellTool === null ? "text" : "final";
    return {
      kind: "text",
      text: shellTool === null ? "Live test" : `${FINAL_MARKER}: ${results} steps done`,
    };
  }
  if (toolResult !== null) {
    entry.answer = "final";
    const said = `${FINAL_MARKER}: the command printed: ${toolResult.trim()}`;
    return { kind: "text", text: scenario === "outcome" ? `${said}\n\n${OUTCOME_LINE}` : said };
  }
  const command = SCENARIO_COMMANDS[scenario];
  if (command !== undefined && shellTool !== null) {
    entry.answer = "tool-call";
    entry.note = shellTool;
    return { kind: "tool", tool: shellTool, command };
  }
  if (command !== undefined) entry.note = "no shell tool offered";
  entry.answer = scenario === "text" ? "final" : "text";
  return { kind: "text", text: scenario === "text" ? `${FINAL_MARKER}: hello from the mock` : "Live test" };
}

function answer(
  api: Api,
  scenario: Scenario,
  body: Record<string, unknown>,
  url: URL,
  res: http.ServerResponse,
  entry: LoggedRequest,
  nextId: (prefix: string) => string,
): void {
  switch (api) {
    case "models":
      entry.answer = "models";
      // Both the OpenAI list shape and codex's {models: []} catalogue shape.
      sendJson(res, 200, {
        object: "list",
        data: [{ id: "mock-model", object: "model", owned_by: "mock" }],
        models: [],
      });
      return;
    case "anthropic-count":
      entry.answer = "count";
      sendJson(res, 200, { input_tokens: USAGE.input });
      return;
    case "gemini-count":
      entry.answer = "count";
      sendJson(res, 200, { totalTokens: USAGE.input });
      return;
    case "responses":
      responsesAnswer(scenario, body, res, entry, nextId);
      return;
    case "chat":
      chatAnswer(scenario, body, res, entry, nextId);
      return;
    case "anthropic":
      anthropicAnswer(scenario, body, res, entry, nextId);
      return;
    case "gemini":
      geminiAnswer(scenario, body, url, res, entry);
      return;
  }
}

// ---------------------------------------------------------------------------------------------------
// OpenAI Responses API (codex)

function responsesAnswer(
  scenario: Scenario,
  body: Record<string, unknown>,
  res: http.ServerResponse,
  entry: LoggedRequest,
  nextId: (prefix: string) => string,
): void {
  const input = arrayOf(body.input);
  const last = input.at(-1);
  let toolResult: string | null = null;
  if (last !== undefined && /_call_output$/.test(String(last.type))) toolResult = outputText(last.output);
  // codex's shell tools across versions: exec_command (unified exec, {cmd}), shell_command ({command}
  // as a string), shell ({command} as argv), or the built-in local_shell tool type.
  const tools = arrayOf(body.tools);
  const names = tools.map((t) => (t.type === "local_shell" ? "local_shell" : String(t.name ?? "")));
  const shell =
    ["exec_command", "shell_command", "shell", "local_shell"].find((n) => names.includes(n)) ?? null;
  const results = input.filter((i) => /_call_output$/.test(String(i.type))).length;
  const turn =
    scenario === "steer"
      ? responsesSteerTurn(input, shell, entry)
      : turnFor(scenario, toolResult, shell, entry, results, JSON.stringify(body));
  const usage = usageOf(scenario);

  const responseId = nextId("resp");
  const events: Record<string, unknown>[] = [
    { type: "response.created", response: { id: responseId, object: "response", status: "in_progress" } },
  ];
  if (turn.kind === "tool") {
    const callId = nextId("call");
    let item: Record<string, unknown>;
    if (turn.tool === "local_shell") {
      item = {
        type: "local_shell_call",
        id: nextId("lsh"),
        call_id: callId,
        status: "completed",
        action: { type: "exec", command: ["bash", "-lc", turn.command] },
      };
    } else {
      const args =
        turn.tool === "exec_command"
          ? { cmd: turn.command, yield_time_ms: 10_000 }
          : turn.tool === "shell"
            ? { command: ["bash", "-lc", turn.command] }
            : { command: turn.command };
      item = {
        type: "function_call",
        id: nextId("fc"),
        call_id: callId,
        name: turn.tool,
        arguments: JSON.stringify(args),
        status: "completed",
      };
    }
    events.push({
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, status: "in_progress" },
    });
    events.push({ type: "response.output_item.done", output_index: 0, item });
  } else {
    const itemId = nextId("msg");
    events.push({
      type: "response.output_item.added",
      output_index: 0,
      item: { type: "message", id: itemId, role: "assistant", status: "in_progress", content: [] },
    });
    events.push({
      type: "response.output_text.delta",
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      delta: turn.text,
    });
    events.push({
      type: "response.output_item.done",
      output_index: 0,
      item: {
        type: "message",
        id: itemId,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: turn.text, annotations: [] }],
      },
    });
  }
  events.push({
    type: "response.completed",
    response: {
      id: responseId,
      object: "response",
      status: "completed",
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: usage.cached },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.input + usage.output,
      },
    },
  });
  sendNamedEvents(res, events);
}

// ---------------------------------------------------------------------------------------------------
// OpenAI Chat Completions (opencode)

function chatAnswer(
  scenario: Scenario,
  body: Record<string, unknown>,
  res: http.ServerResponse,
  entry: LoggedRequest,
  nextId: (prefix: string) => string,
): void {
  const messages = arrayOf(body.messages);
  const last = messages.at(-1);
  const toolResult = last?.role === "tool" ? outputText(last.content) : null;
  const names = arrayOf(body.tools).map((t) => String(asRecordOrEmpty(t.function).name ?? ""));
  const shell = ["bash", "shell"].find((n) => names.includes(n)) ?? null;
  const results = messages.filter((m) => m.role === "tool").length;
  const turn =
    scenario === "steer"
      ? chatSteerTurn(messages, shell, entry)
      : turnFor(scenario, toolResult, shell, entry, results, JSON.stringify(body));
  const spent = usageOf(scenario);
  const model = typeof body.model === "string" ? body.model : "mock-model";
  const id = nextId("chatcmpl");
  const created = Math.floor(Date.now() / 1000);
  const chunk = (
    delta: Record<string, unknown>,
    finish: string | null,
    extra: Record<string, unknown> = {},
  ) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });
  const usage = {
    prompt_tokens: spent.input,
    completion_tokens: spent.output,
    total_tokens: spent.input + spent.output,
    prompt_tokens_details: { cached_tokens: spent.cached },
  };

  if (body.stream !== true) {
    const message =
      turn.kind === "tool"
        ? {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: nextId("call"),
                type: "function",
                function: { name: turn.tool, arguments: JSON.stringify(shellArgs(turn.command)) },
              },
            ],
          }
        : { role: "assistant", content: turn.text };
    sendJson(res, 200, {
      id,
      object: "chat.completion",
      created,
      model,
      choices: [{ index: 0, message, finish_reason: turn.kind === "tool" ? "tool_calls" : "stop" }],
      usage,
    });
    return;
  }
  const chunks: unknown[] = [chunk({ role: "assistant", content: "" }, null)];
  if (turn.kind === "tool") {
    chunks.push(
      chunk(
        {
          tool_calls: [
            {
              index: 0,
              id: nextId("call"),
              type: "function",
              function: { name: turn.tool, arguments: JSON.stringify(shellArgs(turn.command)) },
            },
          ],
        },
        null,
      ),
    );
    chunks.push(chunk({}, "tool_calls"));
  } else {
    chunks.push(chunk({ content: turn.text }, null));
    chunks.push(chunk({}, "stop"));
  }
  // The usage chunk (what stream_options.include_usage asks for): no choices, just usage.
  chunks.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
  startSse(res);
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.write("data: [DONE]\n\n");
  res.end();
}

// ---------------------------------------------------------------------------------------------------
// Anthropic Messages API (claude)

function anthropicAnswer(
  scenario: Scenario,
  body: Record<string, unknown>,
  res: http.ServerResponse,
  entry: LoggedRequest,
  nextId: (prefix: string) => string,
): void {
  const messages = arrayOf(body.messages);
  if (scenario === "steer") {
    sendAnthropicTurn(res, body, steerTurn(messages, arrayOf(body.tools), entry), nextId);
    return;
  }
  const last = messages.at(-1);
  let toolResult: string | null = null;
  if (last?.role === "user" && Array.isArray(last.content)) {
    const result = arrayOf(last.content).find((b) => b.type === "tool_result");
    if (result !== undefined) toolResult = outputText(result.content);
  }
  const names = arrayOf(body.tools).map((t) => String(t.name ?? ""));
  const shell = names.includes("Bash") ? "Bash" : null;
  const results = messages
    .filter((m) => m.role === "user")
    .flatMap((m) => arrayOf(m.content))
    .filter((b) => b.type === "tool_result").length;
  // With --json-schema Claude offers the StructuredOutput tool: the answer is a call of it.
  const structured =
    scenario === "answer" && names.includes("StructuredOutput") ? structuredCall(last, entry) : null;
  const turn: Turn =
    structured === null
      ? turnFor(scenario, toolResult, shell, entry, results, JSON.stringify(body))
      : { kind: "text", text: "done" };
  const spent = usageOf(scenario);
  // Anthropic's input_tokens leaves out what was read from the cache.
  const uncached = spent.input - spent.cached;
  const model = typeof body.model === "string" ? body.model : "claude-mock";
  const messageId = nextId("msg");
  const block =
    structured !== null && structured !== "done"
      ? { type: "tool_use", id: nextId("toolu"), name: "StructuredOutput", input: structured }
      : turn.kind === "tool"
        ? { type: "tool_use", id: nextId("toolu"), name: turn.tool, input: shellArgs(turn.command) }
        : { type: "text", text: turn.text };
  const stopReason = block.type === "tool_use" ? "tool_use" : "end_turn";

  if (body.stream !== true) {
    sendJson(res, 200, {
      id: messageId,
      type: "message",
      role: "assistant",
      model,
      content: [block],
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: uncached, cache_read_input_tokens: spent.cached, output_tokens: spent.output },
    });
    return;
  }
  const events: Record<string, unknown>[] = [
    {
      type: "message_start",
      message: {
        id: messageId,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: uncached,
          output_tokens: 1,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: spent.cached,
        },
      },
    },
  ];
  if (block.type === "tool_use") {
    events.push({ type: "content_block_start", index: 0, content_block: { ...block, input: {} } });
    events.push({
      type: "content_block_delta",
      index: 0,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
    });
  } else {
    events.push({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    events.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: block.text } });
  }
  events.push({ type: "content_block_stop", index: 0 });
  events.push({
    type: "message_delta",
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: spent.output },
  });
  events.push({ type: "message_stop" });
  sendNamedEvents(res, events);
}

/** The `steer` scenario's command word: `RUN <command>` in the user's newest words asks for that command. */
export const RUN_WORD = "RUN ";
/** The `steer` scenario's answer to user words that ask for no command starts with this. */
export const HEARD_MARKER = `${FINAL_MARKER}: heard: `;

/** A message's text blocks (or its string content), system reminders taken out, empty ones dropped. */
function wordsOf(message: Record<string, unknown>): string[] {
  const content = message.content;
  const texts =
    typeof content === "string"
      ? [content]
      : arrayOf(content)
          .filter((b) => b.type === "text")
          .map((b) => String(b.text ?? ""));
  return texts
    .map((t) => t.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, "").trim())
    .filter((t) => t.length > 0);
}

/**
 * The `steer` scenario (Claude's stream-json input, steer.live.ts): the model does what the user's newest
 * words say. Claude sends what a user adds mid-turn as a message of role `system` ("The user sent a new
 * message while you were working: …"), after the tool result; an interrupted tool's result and the
 * "[Request interrupted by user…]" marker share a user message with the words that follow them. So the
 * newest message of role user decides, system messages and markers aside:
 * - words holding `RUN <command>` (to the end of the line): a Bash call of that command;
 * - other words: `LIVE-OK: heard: <the words>` (a redirect after an interrupt, a plain question);
 * - no words, a tool result: `LIVE-OK: the command printed: <its output>` (a denied call: the deny's
 *   message as Claude reported it).
 * Every request is noted with the user and system words it carried (`said`).
 */
function steerTurn(
  messages: Record<string, unknown>[],
  tools: Record<string, unknown>[],
  entry: LoggedRequest,
): Turn {
  entry.said = messages.filter((m) => m.role === "user" || m.role === "system").flatMap(wordsOf);
  if (!tools.some((t) => t.name === "Bash")) {
    entry.answer = "text";
    return { kind: "text", text: "Live test" };
  }
  const last = [...messages].reverse().find((m) => m.role === "user");
  const words = (last === undefined ? [] : wordsOf(last)).filter((t) => !/^\[Request interrupted/.test(t));
  const run = words
    .flatMap((t) => t.split("\n"))
    .map((line) => line.indexOf(RUN_WORD))
    .findIndex((i) => i >= 0);
  if (run >= 0) {
    const line = words.flatMap((t) => t.split("\n"))[run] ?? "";
    const command = line.slice(line.indexOf(RUN_WORD) + RUN_WORD.length).trim();
    entry.answer = "tool-call";
    entry.note = command;
    return { kind: "tool", tool: "Bash", command };
  }
  if (words.length > 0) {
    entry.answer = "heard";
    return { kind: "text", text: `${HEARD_MARKER}${words.join(" ").replace(/\s+/g, " ")}` };
  }
  const result = arrayOf(last?.content).find((b) => b.type === "tool_result");
  entry.answer = result === undefined ? "text" : "final";
  return {
    kind: "text",
    text:
      result === undefined
        ? "Live test"
        : `${FINAL_MARKER}: the command printed: ${outputText(result.content).trim()}`,
  };
}

/**
 * The `steer` scenario for codex (Responses API, codex-steer.live.ts): the newest input item decides as
 * `steerTurn` does for Claude — user words holding `RUN <command>`: that command; other user words: `heard`;
 * a tool's output: `the command printed`. codex gives a message steered mid-turn as a user message after
 * the tool's output, and the request's `prompt_cache_key` is its thread (noted as the session).
 */
function responsesSteerTurn(
  input: Record<string, unknown>[],
  shell: string | null,
  entry: LoggedRequest,
): Turn {
  const users = input.filter((i) => i.type === "message" && i.role === "user");
  entry.said = users.flatMap((m) =>
    arrayOf(m.content)
      .filter((b) => b.type === "input_text")
      .map((b) => String(b.text ?? "").trim())
      .filter((t) => t.length > 0 && !t.startsWith("<")),
  );
  const last = input.at(-1);
  if (last !== undefined && /_call_output$/.test(String(last.type))) {
    entry.answer = "final";
    return { kind: "text", text: `${FINAL_MARKER}: the command printed: ${outputText(last.output).trim()}` };
  }
  const words =
    last?.type === "message" && last.role === "user"
      ? arrayOf(last.content)
          .map((b) => String(b.text ?? ""))
          .filter((t) => !t.startsWith("<"))
      : [];
  const line = words.flatMap((t) => t.split("\n")).find((l) => l.includes(RUN_WORD));
  if (line !== undefined && shell !== null) {
    entry.answer = "tool-call";
    entry.note = line.slice(line.indexOf(RUN_WORD) + RUN_WORD.length).trim();
    return { kind: "tool", tool: shell, command: entry.note };
  }
  entry.answer = words.length > 0 ? "heard" : "text";
  const heard = words.join(" ").replace(/\s+/g, " ").trim();
  return { kind: "text", text: words.length > 0 ? `${HEARD_MARKER}${heard}` : "Live test" };
}

/**
 * The `steer` scenario for opencode (Chat Completions, opencode-steer.live.ts): the newest message decides
 * as `steerTurn` does for Claude — a tool's result: `the command printed`; user words holding `RUN
 * <command>`: that command; other user words: `heard`. opencode gives a prompt sent mid-turn as a user
 * message after the tool's result, and a permission rejected with a message as the tool's result.
 */
function chatSteerTurn(
  messages: Record<string, unknown>[],
  shell: string | null,
  entry: LoggedRequest,
): Turn {
  const wordsIn = (m: Record<string, unknown> | undefined) =>
    m === undefined ? [] : wordsOf(m).filter((t) => !t.startsWith("<"));
  entry.said = messages.filter((m) => m.role === "user").flatMap(wordsIn);
  const last = messages.at(-1);
  if (last?.role === "tool") {
    entry.answer = "final";
    return { kind: "text", text: `${FINAL_MARKER}: the command printed: ${outputText(last.content).trim()}` };
  }
  const words = last?.role === "user" ? wordsIn(last) : [];
  const line = words.flatMap((t) => t.split("\n")).find((l) => l.includes(RUN_WORD));
  if (line !== undefined && shell !== null) {
    entry.answer = "tool-call";
    entry.note = line.slice(line.indexOf(RUN_WORD) + RUN_WORD.length).trim();
    return { kind: "tool", tool: shell, command: entry.note };
  }
  entry.answer = words.length > 0 && shell !== null ? "heard" : "text";
  const heard = words.join(" ").replace(/\s+/g, " ").trim();
  return { kind: "text", text: entry.answer === "heard" ? `${HEARD_MARKER}${heard}` : "Live test" };
}

/** One scripted turn as a Messages API answer: SSE when the request streams, else one JSON message. */
function sendAnthropicTurn(
  res: http.ServerResponse,
  body: Record<string, unknown>,
  turn: Turn,
  nextId: (prefix: string) => string,
): void {
  const block: AnthropicBlock =
    turn.kind === "tool"
      ? { type: "tool_use", id: nextId("toolu"), name: turn.tool, input: shellArgs(turn.command) }
      : { type: "text", text: turn.text };
  sendAnthropicMessage(res, body, block, nextId);
}

/** A content block of an assistant message: a tool call or a text. */
type AnthropicBlock =
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "text"; text: string };

/** One assistant message of one content block (a tool call or a text), as the Messages API sends it. */
function sendAnthropicMessage(
  res: http.ServerResponse,
  body: Record<string, unknown>,
  block: AnthropicBlock,
  nextId: (prefix: string) => string,
): void {
  const stopReason = block.type === "tool_use" ? "tool_use" : "end_turn";
  const model = typeof body.model === "string" ? body.model : "claude-mock";
  const messageId = nextId("msg");
  if (body.stream !== true) {
    sendJson(res, 200, {
      id: messageId,
      type: "message",
      role: "assistant",
      model,
      content: [block],
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: USAGE.input, output_tokens: USAGE.output },
    });
    return;
  }
  sendNamedEvents(res, [
    {
      type: "message_start",
      message: {
        id: messageId,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: USAGE.input, output_tokens: 1 },
      },
    },
    {
      type: "content_block_start",
      index: 0,
      content_block: block.type === "tool_use" ? { ...block, input: {} } : { type: "text", text: "" },
    },
    {
      type: "content_block_delta",
      index: 0,
      delta:
        block.type === "tool_use"
          ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
          : { type: "text_delta", text: block.text },
    },
    { type: "content_block_stop", index: 0 },
    {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: USAGE.output },
    },
    { type: "message_stop" },
  ]);
}

/**
 * Claude's StructuredOutput call in the `answer` scenario: first an answer that does not fit; after
 * Claude's tool error (its own check of the schema) one that does; after its success, `done` (a text).
 */
function structuredCall(
  last: Record<string, unknown> | undefined,
  entry: LoggedRequest,
): Record<string, unknown> | "done" {
  entry.note = "structured-output-tool";
  const result =
    last?.role === "user" ? arrayOf(last.content).find((b) => b.type === "tool_result") : undefined;
  if (result === undefined) {
    entry.answer = "answer-invalid";
    return INVALID_ANSWER;
  }
  if (result.is_error === true) {
    entry.answer = "answer-valid";
    return VALID_ANSWER;
  }
  entry.answer = "final";
  return "done";
}

// ---------------------------------------------------------------------------------------------------
// Gemini generateContent / streamGenerateContent (gemini-cli)

function geminiAnswer(
  scenario: Scenario,
  body: Record<string, unknown>,
  url: URL,
  res: http.ServerResponse,
  entry: LoggedRequest,
): void {
  const contents = arrayOf(body.contents);
  const last = contents.at(-1);
  let toolResult: string | null = null;
  const response = arrayOf(last?.parts).find((p) => isRecord(p.functionResponse));
  if (response !== undefined) {
    const payload = asRecordOrEmpty(asRecordOrEmpty(response.functionResponse).response);
    toolResult = outputText(payload.output ?? payload.llmContent ?? payload);
  }
  const names = arrayOf(body.tools).flatMap((t) =>
    arrayOf(t.functionDeclarations).map((f) => String(f.name ?? "")),
  );
  const shell = names.includes("run_shell_command") ? "run_shell_command" : null;
  const results = contents
    .flatMap((c) => arrayOf(c.parts))
    .filter((p) => isRecord(p.functionResponse)).length;
  const config = asRecordOrEmpty(body.generationConfig);
  const wantsJson = config.responseMimeType === "application/json";
  const turn: Turn = wantsJson
    ? // A side request with a JSON schema (next-speaker check, model routing): answer in every known shape.
      {
        kind: "text",
        text: JSON.stringify({ reasoning: "scripted", next_speaker: "user", model_choice: "flash" }),
      }
    : scenario === "steer"
      ? geminiSteerTurn(contents, shell, entry)
      : turnFor(scenario, toolResult, shell, entry, results, JSON.stringify(body));
  if (wantsJson) entry.answer = "json";
  const spent = usageOf(scenario);
  const usageMetadata = {
    promptTokenCount: spent.input,
    cachedContentTokenCount: spent.cached,
    candidatesTokenCount: spent.output,
    totalTokenCount: spent.input + spent.output,
  };
  const modelVersion = "gemini-mock";
  const part =
    turn.kind === "tool"
      ? { functionCall: { name: turn.tool, args: shellArgs(turn.command) } }
      : { text: turn.text };
  const candidate = (parts: unknown[], finish: string | null) => ({
    content: { role: "model", parts },
    ...(finish === null ? {} : { finishReason: finish }),
    index: 0,
  });
  if (!url.pathname.endsWith(":streamGenerateContent")) {
    sendJson(res, 200, { candidates: [candidate([part], "STOP")], usageMetadata, modelVersion });
    return;
  }
  startSse(res);
  res.write(
    `data: ${JSON.stringify({ candidates: [candidate([part], "STOP")], usageMetadata, modelVersion })}\r\n\r\n`,
  );
  res.end();
}

/**
 * The `steer` scenario for gemini (generateContent, gemini-steer.live.ts): the newest content decides as
 * `steerTurn` does for Claude — a tool's response: `the command printed`; user words holding
 * `RUN <command>`: that command; other user words: `heard`. gemini over ACP gives a message only between
 * turns, as the next user content of the same chat.
 */
function geminiSteerTurn(
  contents: Record<string, unknown>[],
  shell: string | null,
  entry: LoggedRequest,
): Turn {
  const textsOf = (c: Record<string, unknown>) =>
    arrayOf(c.parts)
      .filter((p) => typeof p.text === "string")
      .map((p) => String(p.text).trim())
      .filter((t) => t.length > 0 && !t.startsWith("<"));
  entry.said = contents.filter((c) => c.role === "user").flatMap(textsOf);
  const last = contents.at(-1) ?? {};
  const response = arrayOf(last.parts).find((p) => isRecord(p.functionResponse));
  if (response !== undefined) {
    const payload = asRecordOrEmpty(asRecordOrEmpty(response.functionResponse).response);
    entry.answer = "final";
    const printed = outputText(payload.output ?? payload.error ?? payload.llmContent ?? payload).trim();
    return { kind: "text", text: `${FINAL_MARKER}: the command printed: ${printed}` };
  }
  const words = textsOf(last);
  const line = words.flatMap((t) => t.split("\n")).find((l) => l.includes(RUN_WORD));
  if (line !== undefined && shell !== null) {
    entry.answer = "tool-call";
    entry.note = line.slice(line.indexOf(RUN_WORD) + RUN_WORD.length).trim();
    return { kind: "tool", tool: shell, command: entry.note };
  }
  entry.answer = words.length > 0 ? "heard" : "text";
  const heard = words.join(" ").replace(/\s+/g, " ").trim();
  return { kind: "text", text: words.length > 0 ? `${HEARD_MARKER}${heard}` : "Live test" };
}

// ---------------------------------------------------------------------------------------------------
// Tool scripts (an orchestrator calling an MCP server's tools): the Responses API (codex) and the
// Messages API (claude). The turn is the number of tool results the conversation holds so far, so that
// side requests and retries never shift the script; a request that does not offer the server's tools
// (claude's side requests) gets a short text.

function scriptedAnswer(
  api: Api,
  script: ToolScript,
  body: Record<string, unknown>,
  res: http.ServerResponse,
  entry: LoggedRequest,
  nextId: (prefix: string) => string,
): void {
  if (api === "anthropic-count") {
    entry.answer = "count";
    sendJson(res, 200, { input_tokens: USAGE.input });
    return;
  }
  if (api === "models") {
    entry.answer = "models";
    sendJson(res, 200, { object: "list", data: [{ id: "mock-model", object: "model" }], models: [] });
    return;
  }
  if (api !== "responses" && api !== "anthropic")
    throw new Error(`tool scripts speak responses and anthropic, not ${api}`);
  const namespace = `mcp__${script.server}`;
  let results: string[];
  let offered: boolean;
  if (api === "responses") {
    const input = arrayOf(body.input);
    results = input.filter((i) => /_call_output$/.test(String(i.type))).map((i) => outputText(i.output));
    offered = arrayOf(body.tools).some((t) => t.name === namespace);
  } else {
    results = arrayOf(body.messages).flatMap((m) =>
      m.role === "user"
        ? arrayOf(m.content)
            .filter((b) => b.type === "tool_result")
            .map((b) => outputText(b.content))
        : [],
    );
    offered = arrayOf(body.tools).some((t) => String(t.name ?? "").startsWith(`${namespace}__`));
  }
  const call = script.calls[results.length];
  let turn: { kind: "call"; tool: string; input: Record<string, unknown> } | { kind: "text"; text: string };
  if (!offered) {
    entry.answer = "text";
    entry.note = `the ${namespace} tools are not offered`;
    turn = { kind: "text", text: "Live test" };
  } else if (call !== undefined) {
    entry.answer = "tool-call";
    entry.note = `${namespace}.${call.tool}`;
    turn = { kind: "call", tool: call.tool, input: call.input };
  } else {
    entry.answer = "final";
    turn = { kind: "text", text: `${SCRIPTED_MARKER}: ${results.at(-1)?.trim() ?? ""}` };
  }
  if (api === "responses") {
    const responseId = nextId("resp");
    const item =
      turn.kind === "call"
        ? {
            type: "function_call",
            id: nextId("fc"),
            call_id: nextId("call"),
            name: turn.tool,
            namespace,
            arguments: JSON.stringify(turn.input),
            status: "completed",
          }
        : {
            type: "message",
            id: nextId("msg"),
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: turn.text, annotations: [] }],
          };
    sendNamedEvents(res, [
      { type: "response.created", response: { id: responseId, object: "response", status: "in_progress" } },
      { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress" } },
      { type: "response.output_item.done", output_index: 0, item },
      {
        type: "response.completed",
        response: {
          id: responseId,
          object: "response",
          status: "completed",
          usage: {
            input_tokens: USAGE.input,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: USAGE.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: USAGE.input + USAGE.output,
          },
        },
      },
    ]);
    return;
  }
  sendAnthropicMessage(
    res,
    body,
    turn.kind === "call"
      ? { type: "tool_use", id: nextId("toolu"), name: `${namespace}__${turn.tool}`, input: turn.input }
      : { type: "text", text: turn.text },
    nextId,
  );
}

// ---------------------------------------------------------------------------------------------------

/** The shell tools' arguments in claude (Bash), gemini (run_shell_command) and opencode (bash). */
function shellArgs(command: string): Record<string, unknown> {
  return { command, description: "live suite scripted command" };
}

/** An SSE stream whose events are named by their `type` (the Responses and Messages APIs). */
function sendNamedEvents(res: http.ServerResponse, events: readonly Record<string, unknown>[]): void {
  startSse(res);
  for (const event of events) res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}

function startSse(res: http.ServerResponse): void {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
}

function sendJson(
  res: http.ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asRecordOrEmpty(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

function arrayOf(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** A tool output as text: a string, content blocks ({type: text, text}), or anything else as JSON. */
function outputText(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    return value
      .map((v) => (typeof v === "string" ? v : isRecord(v) && typeof v.text === "string" ? v.text : ""))
      .join("");
  }
  if (isRecord(value) && typeof value.content === "string") return value.content;
  return JSON.stringify(value ?? "");
}
