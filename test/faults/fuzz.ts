import * as fs from "node:fs";
import * as path from "node:path";
import type { Outcome } from "../../src/backends/types.js";
import type { ErrorFact } from "../../src/domain/ending/failure.js";
import { MAX_REPORT_TOKENS, TOKEN_FIELDS, type UsageReport } from "../../src/domain/spend/usage.js";
import { MAX_MESSAGE_CHARS } from "../../src/domain/text/redact.js";
import { ERROR_KINDS, STATUSES } from "../../src/domain/vocab.js";
import type { LineFacts } from "../../src/domain/watch/facts.js";
import { ROOT } from "../helpers/folders.js";

// A seeded generator of hostile event-stream lines for the fault matrix (row 4): recorded events of every
// CLI with their fields mutated, random JSON, torn JSON, invalid UTF-8, NUL bytes, deep nesting, long
// lines, CRLF endings. Seeded, so a failure names a line that can be generated again.

/** mulberry32: a small, fast, seeded PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every recorded event line of every CLI in test/fixtures/recorded. */
export function recordedLines(): string[] {
  const root = path.join(ROOT, "test/fixtures/recorded");
  const lines: string[] = [];
  for (const cli of fs.readdirSync(root)) {
    for (const file of fs.readdirSync(path.join(root, cli))) {
      if (!file.endsWith(".jsonl") && !file.endsWith(".stderr")) continue;
      for (const line of fs.readFileSync(path.join(root, cli, file), "utf8").split("\n")) {
        if (line !== "") lines.push(line);
      }
    }
  }
  return lines;
}

const WORDS = [
  "type",
  "item",
  "id",
  "message",
  "result",
  "usage",
  "session_id",
  "sessionID",
  "thread_id",
  "tool_use",
  "tool_result",
  "error",
  "status",
  "part",
  "content",
  "is_error",
  "subtype",
  "stats",
  "input_tokens",
  "turn.completed",
  "item.started",
  "step_finish",
  "api_retry",
  "Reconnecting... 1/5",
  "429",
  "",
  // The shapes of failures (test/fixtures/recorded/*/auth401, quota, ratelimit-long, context400, …).
  "api_error_status",
  "error_status",
  "terminal_reason",
  "prompt_too_long",
  "authentication_failed",
  "billing_error",
  "statusCode",
  "responseBody",
  "responseHeaders",
  "retry-after",
  "ContextOverflowError",
  "APIError",
  "compaction_continue",
  "synthetic",
  "severity",
  "timestamp",
  "[API Error: ",
  '[API Error: {"error":{"code":401,"message":"x","status":"UNAUTHENTICATED"}}]',
  "[API Error: You have exhausted your daily quota.]\nPlease wait",
  "insufficient_quota",
  "Please retry in 3600s.",
  "The limit resets at 2026-11-30T16:18:40Z.",
  "try again in 99999999999 days",
  "resets at 9999-99-99T99:99Z",
  "Reconnecting... 1/5 (unexpected status 401 Unauthorized: bad key sk-abcdefgh12345678, url: http://h/?key=AIzaSyA1234567890abcdefghij)",
  "Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {}",
  "Error when talking to Gemini API Full report available at: /tmp/r.json _ApiError: {}",
  "  cause: { code: 429, message: 'x', details: [] },",
  "Error resuming session: Invalid session identifier",
  "\u001b[91mError: \u001b[0mSession not found",
  "error: unexpected argument '--x' found",
];

/** The usage fields of the four CLIs (and of codex's rollout and gemini's session file). */
const USAGE_KEYS = new Set([
  "input_tokens",
  "output_tokens",
  "cached_input_tokens",
  "cache_write_input_tokens",
  "reasoning_output_tokens",
  "cache_read_input_tokens",
  "cache_creation_input_tokens",
  "inputTokens",
  "outputTokens",
  "cacheReadInputTokens",
  "cacheCreationInputTokens",
  "costUSD",
  "total_cost_usd",
  "total_tokens",
  "cached",
  "input",
  "output",
  "reasoning",
  "read",
  "write",
  "cost",
  "thoughts",
  "tool",
  "total",
]);

/** What a usage field becomes: negative, not a number, absurd, fractional, of another type, or less. */
const HOSTILE_COUNTS: readonly unknown[] = [-1, -1e9, 1e308, 1e20, 3.5, "12", "NaN", null, {}, [], true, 0];

/** Lines of the CLIs' usage logs (codex's rollout, gemini's session file), whose fields are fuzzed too. */
const USAGE_LOG_LINES = [
  '{"timestamp":"2026-12-01T11:17:45.474Z","type":"token_usage_record","payload":{"thread_id":"t","response_id":"resp_1","usage":{"input_tokens":1200,"cached_input_tokens":100,"cache_write_input_tokens":0,"output_tokens":34,"reasoning_output_tokens":4,"total_tokens":1234}}}',
  '{"timestamp":"2026-12-01T11:17:45.338Z","type":"turn_context","payload":{"model":"gpt-5"}}',
  '{"id":"m1","timestamp":"2026-12-01T11:18:42.908Z","type":"gemini","content":"","tokens":{"input":1200,"output":34,"cached":0,"thoughts":5,"tool":0,"total":1239},"model":"gemini-2.5-flash"}',
];

const isIsoTime = (value: unknown) =>
  typeof value === "string" && !Number.isNaN(Date.parse(value)) && new Date(value).toISOString() === value;

function badError(error: ErrorFact): string | null {
  if (typeof error.message !== "string") return "error message is not a string";
  if (error.kind !== null && !ERROR_KINDS.includes(error.kind)) return `unknown error kind ${error.kind}`;
  if (error.status !== null && !Number.isInteger(error.status)) return `bad error status ${error.status}`;
  if (error.words !== "provider" && error.words !== "cli") return "bad words";
  const after = error.retryAfter;
  if (after !== null && !("atMs" in after ? Number.isFinite(after.atMs) : Number.isFinite(after.delayMs)))
    return `bad retryAfter ${JSON.stringify(after)}`;
  return null;
}

/** What is wrong with a usage report, or null: counts are whole, at most the cap, parts within wholes. */
function badUsage(report: UsageReport): string | null {
  const count = (n: unknown) =>
    typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= MAX_REPORT_TOKENS;
  for (const use of report.uses) {
    const t = use.tokens;
    if (!TOKEN_FIELDS.every((k) => count(t[k]))) return `bad usage ${JSON.stringify(use)}`;
    if (t.cachedInput + t.cacheWrite > t.input || t.reasoning > t.output)
      return `inconsistent usage ${JSON.stringify(use)}`;
    if (use.costUsd !== null && !(Number.isFinite(use.costUsd) && use.costUsd >= 0))
      return `bad cost ${use.costUsd}`;
  }
  return null;
}

/** What is wrong with the facts a backend read from a line, or null when they are sound. */
export function wellFormed(facts: LineFacts): string | null {
  if (typeof facts !== "object" || facts === null) return "not an object";
  if (typeof facts.progress !== "boolean") return "progress is not a boolean";
  if (facts.usage !== undefined) {
    const bad = badUsage(facts.usage);
    if (bad !== null) return bad;
  }
  if (facts.usageIgnored !== undefined && typeof facts.usageIgnored !== "string") return "bad usageIgnored";
  if (facts.thread !== undefined && (typeof facts.thread !== "string" || facts.thread === ""))
    return "bad thread";
  for (const tool of facts.toolsOpened ?? [])
    if (typeof tool.id !== "string" || typeof tool.label !== "string") return "bad tool";
  if (facts.reply !== undefined && typeof facts.reply.text !== "string") return "bad reply";
  if (facts.describe !== undefined && typeof facts.describe !== "string") return "bad describe";
  if (facts.retry !== undefined && !ERROR_KINDS.includes(facts.retry.kind))
    return `bad retry kind ${facts.retry.kind}`;
  if (facts.error !== undefined) return badError(facts.error);
  return null;
}

/** What is wrong with a finalized outcome, or null when it is sound. */
export function soundOutcome(outcome: Outcome): string | null {
  if (!STATUSES.includes(outcome.status)) return `bad status ${outcome.status}`;
  if ((outcome.status === "ok") !== (outcome.failure === null))
    return "a failure on ok, or none on a failure";
  const failure = outcome.failure;
  if (failure === null) return null;
  if (!ERROR_KINDS.includes(failure.kind)) return `bad kind ${failure.kind}`;
  if (failure.message.length > MAX_MESSAGE_CHARS) return `message of ${failure.message.length} characters`;
  if (failure.retryAfter !== null && !isIsoTime(failure.retryAfter))
    return `bad retryAfter ${failure.retryAfter}`;
  return null;
}

export class Fuzzer {
  private readonly random: () => number;
  private readonly recorded: string[];

  private readonly withUsage: string[];

  constructor(seed: number) {
    this.random = prng(seed);
    this.recorded = recordedLines();
    this.withUsage = [
      ...this.recorded.filter((l) => /"(?:usage|tokens|stats|modelUsage)"/.test(l)),
      ...USAGE_LOG_LINES,
    ];
  }

  int(n: number): number {
    return Math.floor(this.random() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  /** A random JSON value: the kinds a mutated field can take. */
  value(depth = 0): unknown {
    switch (this.int(depth > 3 ? 6 : 9)) {
      case 0:
        return null;
      case 1:
        return this.random() < 0.5;
      case 2:
        return this.pick([0, -1, 1e308, -0, 3.5, Number.MAX_SAFE_INTEGER, 42]);
      case 3:
        return this.pick(WORDS);
      case 4:
        return "x".repeat(this.int(300));
      case 5:
        return String.fromCharCode(...Array.from({ length: this.int(20) }, () => this.int(0x10000)));
      case 6:
        return Array.from({ length: this.int(4) }, () => this.value(depth + 1));
      default: {
        const out: Record<string, unknown> = {};
        for (let i = this.int(5); i > 0; i--) out[this.pick(WORDS)] = this.value(depth + 1);
        return out;
      }
    }
  }

  /** A recorded event with some of its fields replaced, deleted or retyped. */
  mutated(): string {
    const line = this.pick(this.recorded);
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      return line;
    }
    for (let n = 1 + this.int(3); n > 0; n--) event = this.mutate(event, 0);
    return JSON.stringify(event) ?? "null";
  }

  private mutate(value: unknown, depth: number): unknown {
    if (value === null || typeof value !== "object" || depth > 6 || this.random() < 0.15) {
      return this.random() < 0.1 ? undefined : this.value();
    }
    if (Array.isArray(value)) {
      if (value.length === 0) return [this.value()];
      const copy = [...value];
      const i = this.int(copy.length);
      copy[i] = this.mutate(copy[i], depth + 1);
      return copy;
    }
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    if (keys.length === 0 || this.random() < 0.1) {
      copy[this.pick(WORDS)] = this.value();
    } else {
      const key = this.pick(keys);
      copy[key] = this.mutate(copy[key], depth + 1);
    }
    return copy;
  }

  /**
   * A line that reports usage — a recorded one, or one of a CLI's usage log — with its usage fields made
   * hostile: negative, NaN as text, absurd, fractional, of another type, or lower than they were.
   */
  usageMutated(): string {
    const event: unknown = JSON.parse(this.pick(this.withUsage));
    const walk = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(walk);
      if (typeof value !== "object" || value === null) return value;
      const out: Record<string, unknown> = {};
      for (const [key, field] of Object.entries(value)) {
        if (USAGE_KEYS.has(key) && typeof field === "number" && this.random() < 0.6) {
          out[key] = this.random() < 0.3 ? Math.floor(field / (2 + this.int(5))) : this.pick(HOSTILE_COUNTS);
        } else out[key] = walk(field);
      }
      return out;
    };
    return JSON.stringify(walk(event));
  }

  /** One hostile line as bytes, without its newline. */
  lineBytes(): Buffer {
    const kind = this.int(100);
    if (kind < 12) return Buffer.from(this.usageMutated());
    if (kind < 45) return Buffer.from(this.mutated());
    if (kind < 55) return Buffer.from(JSON.stringify(this.value()) ?? "null");
    if (kind < 65) {
      const whole = this.mutated();
      return Buffer.from(whole.slice(0, this.int(whole.length)));
    }
    if (kind < 72) return Buffer.from(Array.from({ length: this.int(200) }, () => this.int(256)));
    if (kind < 78) {
      const whole = Buffer.from(this.mutated());
      whole[this.int(whole.length)] = 0;
      return whole;
    }
    if (kind < 82) {
      const depth = 500 + this.int(4500);
      return Buffer.from(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`);
    }
    if (kind < 86) return Buffer.from(`${this.mutated()}\r`);
    if (kind < 87) return Buffer.from(`{"type":"${"y".repeat(50_000 + this.int(150_000))}"}`);
    if (kind < 92) return Buffer.from(`  \t ${this.mutated()}   `);
    if (kind < 96)
      return Buffer.from(this.pick(["", " ", "{", "}", "[]", "null", "\ufeff{}", "{}{}", '{"type":null}']));
    // Lone surrogates and other text JSON.stringify keeps, decoded later as replacement characters.
    return Buffer.from(
      JSON.stringify({ type: String.fromCharCode(0xd800 + this.int(0x800)), x: this.value() }),
    );
  }

  /** A line as a backend's parse receives it (decoded, newline and CR removed by the reader). */
  lineText(): string {
    const text = this.lineBytes().toString("utf8");
    return this.random() < 0.5 && text.endsWith("\r") ? text.slice(0, -1) : text;
  }
}
