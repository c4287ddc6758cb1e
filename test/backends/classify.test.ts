import { describe, expect, it } from "vitest";
import {
  classify,
  durationInText,
  errorFact,
  kindOfWords,
  providerBody,
  retryAfterInText,
  retryKind,
  statusInText,
} from "../../src/backends/classify.js";

describe("classify: a code, then a deciding status, then the words, then a generic code or status", () => {
  it.each([
    [
      "a specific code over everything",
      { status: 400, codes: ["insufficient_quota"], text: "whatever" },
      "quota",
    ],
    ["opencode's ContextOverflowError", { codes: ["ContextOverflowError"], text: "" }, "context"],
    [
      "Google's API_KEY_INVALID reason on a 400",
      { status: 400, codes: ["API_KEY_INVALID", "INVALID_ARGUMENT"], text: "" },
      "auth",
    ],
    ["401", { status: 401, text: "The model does not exist" }, "auth"],
    ["403", { status: 403, text: "You are not allowed to sample from this model" }, "auth"],
    ["413", { status: 413, text: "" }, "context"],
    [
      "a 429 without quota words",
      { status: 429, text: "Resource has been exhausted (e.g. check quota)." },
      "rate-limit",
    ],
    ["a 429 that says the quota is spent", { status: 429, text: "You exceeded your current quota" }, "quota"],
    ["a 500", { status: 500, text: "" }, "provider-down"],
    ["a 529", { status: 529, text: "" }, "provider-down"],
    [
      "a 400 whose words say context",
      {
        status: 400,
        codes: ["INVALID_ARGUMENT"],
        text: "The input token count (1200000) exceeds the maximum",
      },
      "context",
    ],
    ["a 400 whose words say credit", { status: 400, text: "Credit balance is too low" }, "quota"],
    [
      "a generic code after the words",
      { codes: ["invalid_request_error"], text: "Unsupported parameter" },
      "request",
    ],
    ["RESOURCE_EXHAUSTED without a status", { codes: ["RESOURCE_EXHAUSTED"], text: "" }, "rate-limit"],
    ["a bare 404", { status: 404, text: "" }, "model"],
    ["a bare 400", { status: 400, text: "messages: text content blocks must be non-empty" }, "request"],
    ["a 418", { status: 418, text: "" }, "request"],
    ["nothing known", { text: "something broke" }, null],
    ["an unknown code", { codes: ["weird_code"], text: "" }, null],
  ] as const)("%s", (_title, evidence, kind) => {
    expect(classify(evidence)).toBe(kind);
  });

  it.each([
    ["Codex ran out of room in the model's context window.", "context"],
    ["Prompt is too long · the request is ~215000 tokens", "context"],
    ["This model's maximum context length is 128000 tokens.", "context"],
    ["Quota exceeded. Check your plan and billing details.", "quota"],
    ["You have exhausted your daily quota on this model.", "quota"],
    ["Claude AI usage limit reached", "quota"],
    ["Invalid API key · Fix external API key", "auth"],
    ["API key not valid. Please pass a valid API key.", "auth"],
    ["Failed to authenticate. API Error: 403", "auth"],
    ["The caller does not have permission", "auth"],
    ["The model `mock-model` does not exist or you do not have access to it.", "model"],
    ["models/gemini-2.5-flash is not found for API version v1beta", "model"],
    ["There's an issue with the selected model (claude-opus-4-8[1m]).", "model"],
    ["mockllm: rate limited", "rate-limit"],
    ["exceeded retry limit, last status: 429 Too Many Requests", "rate-limit"],
    ["We’re currently experiencing high demand, which may cause temporary errors.", "provider-down"],
    ["mockllm: overloaded", "provider-down"],
    ["Error: exception TypeError: fetch failed sending request", "provider-down"],
    ["No conversation found with session ID: 7d4e1c2a", "resume"],
    ["Error resuming session: No previous sessions found for this project.", "resume"],
    ["thread/resume failed: no rollout found for thread id 7d4e1c2a", "resume"],
    ["Session not found", "resume"],
    ["port 4290 is busy", null],
    ["Please wait and try again later. To increase your limits, request a quota increase", null],
  ] as const)("reads %j as %s", (text, kind) => {
    expect(kindOfWords(text)).toBe(kind);
  });

  it("takes a retry nothing identifies for the provider being down", () => {
    expect(retryKind({ status: null, text: "request failed: unknown" })).toBe("provider-down");
    expect(retryKind({ status: 401, text: "" })).toBe("auth");
  });
});

describe("statusInText", () => {
  it.each([
    ["unexpected status 401 Unauthorized: Incorrect API key", 401],
    ["exceeded retry limit, last status: 429 Too Many Requests", 429],
    ["API Error: 400 messages: text content blocks must be non-empty", 400],
    ["API Error: Request rejected (429) · mockllm: rate limited", 429],
    ["Attempt 1 failed with status 500. Retrying with backoff", 500],
    ["HTTP 503 Service Unavailable", 503],
    ["wrote 401 lines", null],
    ["Codex ran out of room", null],
  ] as const)("finds in %j the status %s", (text, status) => {
    expect(statusInText(text)).toBe(status);
  });
});

describe("retry times", () => {
  it.each([
    ["1h0m0s", 3_600_000],
    ["3600s", 3_600_000],
    ["2 days 3 hours 5 minutes", 183_900_000],
    ["90 seconds", 90_000],
    ["500ms", 500],
    ["1.5h", 5_400_000],
    ["soon", null],
  ] as const)("reads the duration %j as %s ms", (text, ms) => {
    expect(durationInText(text)).toBe(ms);
  });

  const AT = Date.parse("2026-11-30T15:18:42.090Z");
  it.each([
    ["The limit resets at 2026-11-30T16:18:40Z.", { atMs: Date.parse("2026-11-30T16:18:40Z") }],
    ["Please try again at 2026-11-30T16:00:00+01:00", { atMs: Date.parse("2026-11-30T15:00:00Z") }],
    ["Please try again in 1h0m0s.", { delayMs: 3_600_000, fromMs: AT }],
    ["Resource has been exhausted. Please retry in 3600s. (tag)", { delayMs: 3_600_000, fromMs: AT }],
    ["Suggested retry after 3600s.", { delayMs: 3_600_000, fromMs: AT }],
    ["try again in 2 days 3 hours 5 minutes or upgrade", { delayMs: 183_900_000, fromMs: AT }],
    ['{"retry-after": "120"}', { delayMs: 120_000, fromMs: AT }],
    ["try again in a moment", null],
    ["retry later", null],
  ] as const)("reads when to come back from %j", (text, want) => {
    expect(retryAfterInText(text, AT)).toEqual(want);
  });
});

describe("provider bodies", () => {
  it("reads an OpenAI body's message and codes", () => {
    const body = providerBody(
      '{"error":{"message":"Incorrect API key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}',
    );
    expect(body).toEqual({
      message: "Incorrect API key",
      status: null,
      codes: ["invalid_api_key", "invalid_request_error"],
    });
  });

  it("reads a Google body's code as the status and its ErrorInfo reasons as codes", () => {
    const body = providerBody(
      '{"error":{"code":401,"message":"bad creds","status":"UNAUTHENTICATED","details":[{"reason":"ACCESS_TOKEN_EXPIRED"}]}}',
    );
    expect(body).toEqual({
      message: "bad creds",
      status: 401,
      codes: ["ACCESS_TOKEN_EXPIRED", "UNAUTHENTICATED"],
    });
  });

  it.each(["not json", '{"error":"flat"}', '{"error":{"code":1}}', "[]"])("is null for %j", (text) => {
    expect(providerBody(text)).toBeNull();
  });

  it("builds an error fact with its kind and retry time", () => {
    expect(errorFact({ text: "Please retry in 10s.", status: 429, words: "provider", fromMs: 0 })).toEqual({
      message: "Please retry in 10s.",
      kind: "rate-limit",
      status: 429,
      words: "provider",
      retryAfter: { delayMs: 10_000, fromMs: 0 },
    });
  });
});
