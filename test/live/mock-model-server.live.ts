import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  FINAL_MARKER,
  INVALID_ANSWER,
  type MockModelServer,
  SCRIPTED_MARKER,
  startMockModelServer,
  VALID_ANSWER,
} from "./mock-model-server.js";

// The mock model server on its own (no CLI): each wire protocol's scripted turns, the failure
// scenarios, and the log of unexpected requests. When a CLI's live test fails, this says whether the
// mock or the CLI moved.

let server: MockModelServer;

beforeEach(async () => {
  server = await startMockModelServer({ quiet: true });
});

afterEach(async () => {
  await server.close();
});

async function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

/** The JSON payloads of an SSE body's `data:` lines. */
function sseData(text: string): Record<string, unknown>[] {
  return text
    .split(/\r?\n/)
    .filter((l) => l.startsWith("data: ") && l !== "data: [DONE]")
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}

describe("mock model server", () => {
  it("listens on 127.0.0.1 only", () => {
    expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("Responses API (codex): exec_command call, then the final text after its output, with usage", async () => {
    const url = `${server.baseUrl("tool")}/v1/responses`;
    const tools = [{ type: "function", name: "exec_command" }];
    const first = sseData((await post(url, { input: [{ type: "message" }], tools, stream: true })).text);
    expect(first.map((e) => e.type)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.output_item.done",
      "response.completed",
    ]);
    const call = first[2]?.item as Record<string, unknown>;
    expect(call).toMatchObject({ type: "function_call", name: "exec_command" });
    expect(JSON.parse(String(call.arguments))).toMatchObject({ cmd: "echo hi" });
    const input = [call, { type: "function_call_output", call_id: call.call_id, output: "hi\n" }];
    const second = sseData((await post(url, { input, tools, stream: true })).text);
    expect(second.map((e) => e.type)).toContain("response.output_text.delta");
    const done = second.find((e) => e.type === "response.output_item.done")?.item as Record<string, unknown>;
    expect(JSON.stringify(done)).toContain(`${FINAL_MARKER}: the command printed: hi`);
    const completed = second.at(-1)?.response as { usage: { input_tokens: number } };
    expect(completed.usage.input_tokens).toBeGreaterThan(0);
  });

  it("Chat Completions (opencode): a title request gets text; bash tool_calls; final text; [DONE]", async () => {
    const url = `${server.baseUrl("tool")}/v1/chat/completions`;
    const title = await post(url, { messages: [{ role: "user", content: "x" }], stream: true });
    expect(title.text).toContain("data: [DONE]");
    const tools = [{ type: "function", function: { name: "bash" } }];
    const first = sseData((await post(url, { messages: [{ role: "user" }], tools, stream: true })).text);
    const toolCalls = first.flatMap((c) => (c.choices as { delta: { tool_calls?: unknown[] } }[]) ?? []);
    expect(JSON.stringify(toolCalls)).toContain('"name":"bash"');
    expect(first.some((c) => c.usage !== undefined)).toBe(true);
    const messages = [{ role: "user" }, { role: "tool", tool_call_id: "c", content: "hi\n" }];
    const second = await post(url, { messages, tools, stream: true });
    expect(second.text).toContain(`${FINAL_MARKER}: the command printed: hi`);
  });

  it("Messages API (claude): Bash tool_use via input_json_delta, then text; count_tokens; a HEAD probe", async () => {
    const url = `${server.baseUrl("tool")}/v1/messages`;
    const tools = [{ name: "Bash" }];
    const first = sseData((await post(url, { messages: [{ role: "user" }], tools, stream: true })).text);
    expect(first.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(first[1]?.content_block).toMatchObject({ type: "tool_use", name: "Bash" });
    const toolUseId = String((first[1]?.content_block as { id?: string } | undefined)?.id);
    const messages = [
      { role: "user" },
      { role: "user", content: [{ type: "tool_result", tool_use_id: toolUseId, content: "hi" }] },
    ];
    const second = await post(url, { messages, tools, stream: true });
    expect(second.text).toContain(`${FINAL_MARKER}: the command printed: hi`);
    const count = await post(`${url}/count_tokens`, { messages });
    expect(JSON.parse(count.text)).toMatchObject({ input_tokens: expect.any(Number) });
    const probe = await fetch(server.baseUrl("tool"), { method: "HEAD" });
    expect(probe.status).toBe(200);
  });

  it("Gemini: run_shell_command functionCall, then text after the functionResponse, with usageMetadata", async () => {
    const url = `${server.baseUrl("tool")}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`;
    const tools = [{ functionDeclarations: [{ name: "run_shell_command" }] }];
    const first = sseData((await post(url, { contents: [{ role: "user", parts: [] }], tools })).text);
    expect(JSON.stringify(first)).toContain('"functionCall":{"name":"run_shell_command"');
    expect(first[0]?.usageMetadata).toMatchObject({ promptTokenCount: expect.any(Number) });
    const contents = [
      {
        role: "user",
        parts: [{ functionResponse: { name: "run_shell_command", response: { output: "hi" } } }],
      },
    ];
    const second = await post(url, { contents, tools });
    expect(second.text).toContain(`${FINAL_MARKER}: the command printed: hi`);
  });

  it("a tool script: MCP calls in order (codex: namespaced function_call; claude: mcp__ tool_use), then the last result", async () => {
    const base = server.script("orch", {
      server: "catherd",
      calls: [
        { tool: "dispatch", input: { backend: "exec" } },
        { tool: "result", input: { name: "w" } },
      ],
    });
    const responses = `${base}/v1/responses`;
    const tools = [
      { type: "namespace", name: "mcp__catherd", tools: [{ type: "function", name: "dispatch" }] },
    ];
    const first = sseData(
      (await post(responses, { input: [{ type: "message" }], tools, stream: true })).text,
    );
    const call = first.find((e) => e.type === "response.output_item.done")?.item as Record<string, unknown>;
    expect(call).toMatchObject({ type: "function_call", name: "dispatch", namespace: "mcp__catherd" });
    expect(JSON.parse(String(call.arguments))).toEqual({ backend: "exec" });
    const input = [
      call,
      { type: "function_call_output", call_id: call.call_id, output: "dispatched" },
      { type: "function_call", name: "result", namespace: "mcp__catherd" },
      { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "the reply" }] },
    ];
    const last = sseData((await post(responses, { input, tools, stream: true })).text);
    expect(JSON.stringify(last)).toContain(`${SCRIPTED_MARKER}: the reply`);

    const messages = `${base}/v1/messages`;
    const claudeTools = [{ name: "mcp__catherd__dispatch" }, { name: "mcp__catherd__result" }];
    const side = await post(messages, { messages: [{ role: "user" }], stream: true });
    expect(side.text).toContain("Live test");
    const useTurn = sseData(
      (await post(messages, { messages: [{ role: "user" }], tools: claudeTools, stream: true })).text,
    );
    expect(useTurn[1]?.content_block).toMatchObject({ type: "tool_use", name: "mcp__catherd__dispatch" });
    const afterOne = [
      { role: "user" },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "dispatched" }] },
    ];
    const second = sseData(
      (await post(messages, { messages: afterOne, tools: claudeTools, stream: true })).text,
    );
    expect(second[1]?.content_block).toMatchObject({ type: "tool_use", name: "mcp__catherd__result" });
  });

  it("always500 answers 500 in each API's error shape; hang never answers; unknown paths are logged", async () => {
    const failed = await post(`${server.baseUrl("always500")}/v1/messages`, { stream: true });
    expect(failed.status).toBe(500);
    expect(JSON.parse(failed.text)).toMatchObject({ type: "error" });
    const controller = new AbortController();
    const hanging = fetch(`${server.baseUrl("hang")}/v1/responses`, {
      method: "POST",
      body: "{}",
      signal: controller.signal,
    }).then(
      () => "answered",
      () => "aborted",
    );
    const timer = setTimeout(() => controller.abort(), 300);
    expect(await hanging).toBe("aborted");
    clearTimeout(timer);
    const unknown = await post(`${server.origin}/nowhere`, {});
    expect(unknown.status).toBe(404);
    expect(server.unexpected.map((r) => r.url)).toEqual(["/nowhere"]);
  });

  it.each([
    ["auth401", "/v1/responses", 401, { error: { code: "invalid_api_key" } }],
    [
      "auth401",
      "/v1/messages",
      401,
      { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } },
    ],
    [
      "auth401",
      "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
      401,
      { error: { status: "UNAUTHENTICATED" } },
    ],
    ["always429", "/v1/responses", 429, { error: { code: "rate_limit_exceeded" } }],
    ["model404", "/v1/chat/completions", 404, { error: { code: "model_not_found" } }],
    ["context400", "/v1/chat/completions", 400, { error: { code: "context_length_exceeded" } }],
    [
      "context400",
      "/v1/messages",
      400,
      { error: { message: "prompt is too long: 215000 tokens > 200000 maximum" } },
    ],
    [
      "ratelimit-long",
      "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
      429,
      { error: { status: "RESOURCE_EXHAUSTED" } },
    ],
  ] as const)("%s answers %s with %i in the provider's own shape", async (scenario, route, status, shape) => {
    const url = `${server.baseUrl(scenario)}${route}`;
    const answer = await post(url, { stream: true });
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.text)).toMatchObject(shape);
  });

  it("always429 names no time to come back", async () => {
    const res = await fetch(`${server.baseUrl("always429")}/v1/responses`, { method: "POST", body: "{}" });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBeNull();
    expect(await res.text()).not.toMatch(/try again in|resets at/i);
  });

  it("ratelimit-long says when to come back: Retry-After 3600 and, for Anthropic, the reset time", async () => {
    const res = await fetch(`${server.baseUrl("ratelimit-long")}/v1/messages`, {
      method: "POST",
      body: "{}",
    });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3600");
    const reset = res.headers.get("anthropic-ratelimit-requests-reset") ?? "";
    expect(Date.parse(reset) - Date.now()).toBeGreaterThan(59 * 60_000);
    expect(await res.text()).toContain(`The limit resets at ${reset}.`);
  });

  it("window: each provider's rate-limit headers; window-rejected: a spent plan in each API's shape", async () => {
    const inAnHour = (value: string | null) => Number(value) - Date.now() / 1000;
    const first = await fetch(`${server.baseUrl("window")}/v1/messages`, {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    });
    expect(first.headers.get("anthropic-ratelimit-unified-status")).toBe("allowed");
    expect(first.headers.get("anthropic-ratelimit-unified-representative-claim")).toBe("seven_day");
    const after = await fetch(`${server.baseUrl("window")}/v1/messages`, {
      method: "POST",
      body: JSON.stringify({
        messages: [{ role: "user", content: [{ type: "tool_result", content: "hi" }] }],
      }),
    });
    expect(after.headers.get("anthropic-ratelimit-unified-status")).toBe("allowed_warning");
    expect(after.headers.get("anthropic-ratelimit-unified-5h-utilization")).toBe("0.91");
    expect(after.headers.get("anthropic-ratelimit-unified-5h-surpassed-threshold")).toBe("0.9");
    const codex = await fetch(`${server.baseUrl("window")}/v1/responses`, {
      method: "POST",
      body: JSON.stringify({ input: [{ type: "message" }], stream: true }),
    });
    expect(codex.headers.get("x-codex-primary-used-percent")).toBe("42.5");
    expect(codex.headers.get("x-codex-secondary-window-minutes")).toBe("10080");
    expect(inAnHour(codex.headers.get("x-codex-primary-reset-at"))).toBeGreaterThan(3500);
    const claude = await fetch(`${server.baseUrl("window-rejected")}/v1/messages`, {
      method: "POST",
      body: "{}",
    });
    expect(claude.status).toBe(429);
    expect(claude.headers.get("anthropic-ratelimit-unified-status")).toBe("rejected");
    const spent = await post(`${server.baseUrl("window-rejected")}/v1/responses`, {});
    expect(spent.status).toBe(429);
    const error = (JSON.parse(spent.text) as { error: { type: string; resets_at: number } }).error;
    expect(error.type).toBe("usage_limit_reached");
    expect(error.resets_at - Date.now() / 1000).toBeGreaterThan(3500);
    const daily = await post(`${server.baseUrl("window-rejected")}/v1beta/models/m:generateContent`, {});
    expect(daily.status).toBe(429);
    expect(daily.text).toContain("PerDay");
  });

  it("answer: JSON that does not fit first, JSON that fits after catherd's repair brief; Claude's StructuredOutput after its tool error", async () => {
    const url = `${server.baseUrl("answer")}/v1/responses`;
    const tools = [{ type: "function", name: "exec_command" }];
    const textOf = (events: Record<string, unknown>[]) =>
      String(events.find((e) => e.type === "response.output_text.delta")?.delta);
    const format = { format: { type: "json_schema", name: "codex_output_schema" } };
    const first = sseData(
      (await post(url, { input: [{ type: "message" }], tools, text: format, stream: true })).text,
    );
    expect(JSON.parse(textOf(first))).toEqual(INVALID_ANSWER);
    const repair = [
      { type: "message", content: [{ type: "input_text", text: "Your answer did not fit the JSON Schema" }] },
    ];
    const second = sseData((await post(url, { input: repair, tools, text: format, stream: true })).text);
    expect(JSON.parse(textOf(second))).toEqual(VALID_ANSWER);
    expect(server.requests.map((r) => [r.answer, r.note])).toEqual([
      ["answer-invalid", "output-schema"],
      ["answer-valid", "output-schema"],
    ]);

    const claude = `${server.baseUrl("answer")}/v1/messages`;
    const offered = [{ name: "Bash" }, { name: "StructuredOutput" }];
    const call = JSON.parse(
      (await post(claude, { messages: [{ role: "user", content: "b" }], tools: offered })).text,
    );
    expect(call.content[0]).toMatchObject({
      type: "tool_use",
      name: "StructuredOutput",
      input: INVALID_ANSWER,
    });
    const refused = [
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t", is_error: true, content: "no" }] },
    ];
    const again = JSON.parse((await post(claude, { messages: refused, tools: offered })).text);
    expect(again.content[0]).toMatchObject({
      type: "tool_use",
      name: "StructuredOutput",
      input: VALID_ANSWER,
    });
  });
});
