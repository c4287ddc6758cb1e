import { describe, expect, it } from "vitest";
import { type ExitFacts, judgeEnding, statusByPrecedence } from "../../src/domain/ending/ending.js";
import { type ErrorFact, retryAfterTime, statusOfKind } from "../../src/domain/ending/failure.js";
import { addFacts, emptySummary, type StreamSummary } from "../../src/domain/ending/summary.js";
import { errorKindSchema } from "../../src/domain/schemas.js";
import { inertText } from "../../src/domain/text/inert-text.js";
import {
  cleanMessage,
  MAX_MESSAGE_CHARS,
  recordTail,
  redact,
  redactEnv,
  TAIL_BYTES,
} from "../../src/domain/text/redact.js";
import { ERROR_KINDS, type ErrorKind } from "../../src/domain/vocab.js";

const success = { isError: false, message: null };
const error = (
  kind: ErrorKind | null,
  message = `${kind} words`,
  extra: Partial<ErrorFact> = {},
): ErrorFact => ({
  message,
  kind,
  status: null,
  words: "cli",
  retryAfter: null,
  ...extra,
});
const retry = (kind: ErrorKind) => ({ attempt: 1, max: 5, message: `retry (${kind})`, status: null, kind });

/** A summary folded from facts, as the record makes it. */
function folded(...lines: Parameters<typeof addFacts>[1][]): StreamSummary {
  const summary = emptySummary();
  for (const facts of lines) addFacts(summary, facts);
  return summary;
}
const exit = (
  reason: ExitFacts["reason"],
  code: number | null = 1,
  extra: Partial<ExitFacts> = {},
): ExitFacts => ({
  reason,
  code,
  signal: null,
  ...extra,
});

describe("statusOfKind", () => {
  it.each([
    ["quota", "limit"],
    ["rate-limit", "limit"],
    ["provider-down", "limit"],
    ["auth", "failed"],
    ["model", "failed"],
    ["context", "failed"],
    ["request", "failed"],
    ["resume", "failed"],
    ["cli", "failed"],
    ["spawn", "failed"],
    ["supervisor", "failed"],
    ["timeout", "timeout"],
    ["cancelled", "cancelled"],
    ["lost", "lost"],
  ] as const)("%s → %s", (kind, status) => {
    expect(statusOfKind(kind)).toBe(status);
  });

  it("is a closed set, the zod enum derived from the same tuple", () => {
    expect(errorKindSchema.options).toEqual([...ERROR_KINDS]);
    expect(errorKindSchema.safeParse("oops").success).toBe(false);
    expect(errorKindSchema.safeParse("rate-limit").success).toBe(true);
  });

  it("gives every kind a status", () => {
    expect(ERROR_KINDS.map(statusOfKind).every((s) => typeof s === "string")).toBe(true);
  });
});

describe("judgeEnding: the record's verdict by the written precedence", () => {
  const cases: {
    title: string;
    exit: ExitFacts;
    summary: StreamSummary;
    kind: ErrorKind | null;
    status: string;
  }[] = [
    {
      title: "a cancel is cancelled, whatever the stream said",
      exit: exit("cancelled", 0),
      summary: folded({ progress: true, final: success }),
      kind: "cancelled",
      status: "cancelled",
    },
    {
      title: "the wall limit is a timeout even after a successful answer",
      exit: exit("wall-timeout", 0),
      summary: folded({ progress: true, final: success }),
      kind: "timeout",
      status: "timeout",
    },
    {
      title: "a spawn failure",
      exit: exit("spawn-failed", null),
      summary: emptySummary(),
      kind: "spawn",
      status: "failed",
    },
    {
      title: "a supervisor error",
      exit: exit("supervisor-error", null),
      summary: emptySummary(),
      kind: "supervisor",
      status: "failed",
    },
    {
      title: "a lost dispatch",
      exit: exit("lost", null),
      summary: emptySummary(),
      kind: "lost",
      status: "lost",
    },
    {
      title: "idle with nothing pending is a timeout",
      exit: exit("idle-timeout", null),
      summary: folded({ progress: true }),
      kind: "timeout",
      status: "timeout",
    },
    {
      title: "idle after a rate-limit retry, by the supervisor's account",
      exit: exit("idle-timeout", null, { kind: "rate-limit" }),
      summary: emptySummary(),
      kind: "rate-limit",
      status: "limit",
    },
    {
      title: "idle the supervisor saw no retry before is a timeout, whatever the folded stream says",
      exit: exit("idle-timeout", null, { kind: null }),
      summary: folded({ progress: false, retry: retry("rate-limit") }),
      kind: "timeout",
      status: "timeout",
    },
    {
      title: "idle after a retry, from the stream when the supervisor did not say",
      exit: exit("idle-timeout", null),
      summary: folded({ progress: false, retry: retry("provider-down") }),
      kind: "provider-down",
      status: "limit",
    },
    {
      title: "provider-unavailable with the refusal the supervisor ended it for",
      exit: exit("provider-unavailable", null, { kind: "auth" }),
      summary: folded({ progress: false, retry: retry("auth") }),
      kind: "auth",
      status: "failed",
    },
    {
      title: "provider-unavailable with the last retry's kind",
      exit: exit("provider-unavailable", null),
      summary: folded({ progress: false, retry: retry("rate-limit") }),
      kind: "rate-limit",
      status: "limit",
    },
    {
      title: "provider-unavailable without any retry is the provider being down",
      exit: exit("provider-unavailable", null),
      summary: emptySummary(),
      kind: "provider-down",
      status: "limit",
    },
    {
      title: "a 429 retried and then a success is ok",
      exit: exit("exited", 0),
      summary: folded({ progress: false, retry: retry("rate-limit") }, { progress: true, final: success }),
      kind: null,
      status: "ok",
    },
    {
      title: "a successful terminal event wins over a failing exit code",
      exit: exit("exited", 1),
      summary: folded({ progress: true, final: success }),
      kind: null,
      status: "ok",
    },
    {
      title: "the terminal error's kind",
      exit: exit("exited", 1),
      summary: folded({ progress: true, final: { isError: true, message: "q" }, error: error("quota") }),
      kind: "quota",
      status: "limit",
    },
    {
      title: "an earlier error's kind when the terminal one proves none",
      exit: exit("exited", 1),
      summary: folded(
        { progress: true, error: error("context") },
        { progress: true, final: { isError: true, message: "x" }, error: error(null) },
      ),
      kind: "context",
      status: "failed",
    },
    {
      title: "a retry pending at the end when nothing else tells",
      exit: exit("exited", 143),
      summary: folded({ progress: false, retry: retry("auth") }),
      kind: "auth",
      status: "failed",
    },
    {
      title: "a retry followed by progress proves nothing",
      exit: exit("exited", 1),
      summary: folded({ progress: false, retry: retry("rate-limit") }, { progress: true }),
      kind: "cli",
      status: "failed",
    },
    {
      title: "the exit code's evidence before cli",
      exit: exit("exited", 173),
      summary: emptySummary(),
      kind: "rate-limit",
      status: "limit",
    },
    {
      title: "nothing known and a non-zero exit is cli",
      exit: exit("exited", 2),
      summary: emptySummary(),
      kind: "cli",
      status: "failed",
    },
    {
      title: "an exit 0 without a terminal event is ok",
      exit: exit("exited", 0),
      summary: emptySummary(),
      kind: null,
      status: "ok",
    },
    {
      title: "after-final without a terminal event is ok",
      exit: exit("after-final", null),
      summary: emptySummary(),
      kind: null,
      status: "ok",
    },
    {
      title: "a terminal error with exit 0 fails",
      exit: exit("exited", 0),
      summary: folded({ progress: true, final: { isError: true, message: "boom" } }),
      kind: "cli",
      status: "failed",
    },
    {
      title: "a disk that could not keep the output fails as disk, even after a successful answer",
      exit: exit("exited", 0, { kind: "disk" }),
      summary: folded({ progress: true, final: success }),
      kind: "disk",
      status: "failed",
    },
    {
      title: "a supervisor's stop on a full disk is disk, not supervisor",
      exit: exit("supervisor-error", null, { kind: "disk" }),
      summary: emptySummary(),
      kind: "disk",
      status: "failed",
    },
    {
      title: "a supervisor lost on a full disk is disk and failed, not lost",
      exit: exit("lost", null, { kind: "disk" }),
      summary: emptySummary(),
      kind: "disk",
      status: "failed",
    },
  ];
  for (const c of cases) {
    it(c.title, () => {
      const got = judgeEnding(c.exit, c.summary, {
        kindOfExitCode: (code) => (code === 173 ? "rate-limit" : null),
      });
      expect(got.status).toBe(c.status);
      expect(got.failure?.kind ?? null).toBe(c.kind);
    });
  }

  it("fails a dispatch that needs a terminal event and exited 0 without one", () => {
    expect(judgeEnding(exit("exited", 0), emptySummary(), { needsFinal: true }).failure?.kind).toBe("cli");
  });

  it("fails an exit by a signal nobody sent", () => {
    expect(statusByPrecedence({ reason: "exited", code: null, signal: "SIGSEGV" }, emptySummary())).toBe(
      "failed",
    );
  });
});

describe("judgeEnding: the message", () => {
  it("prefers the provider's words for the kind over the CLI's rewrite", () => {
    const summary = folded(
      {
        progress: true,
        final: { isError: true, message: "gemini's rewrite" },
        error: error("quota", "gemini's rewrite"),
      },
      {
        progress: false,
        error: error("quota", "You exceeded your current quota (tag)", { words: "provider" }),
      },
    );
    expect(judgeEnding(exit("exited", 173), summary).failure?.message).toBe(
      "You exceeded your current quota (tag)",
    );
  });

  it("takes the last retry's words for an end the supervisor decided on a retry", () => {
    const summary = folded({ progress: false, retry: retry("auth") });
    expect(judgeEnding(exit("provider-unavailable", null, { kind: "auth" }), summary).failure?.message).toBe(
      "retry (auth)",
    );
  });

  it("describes the exit when nothing was said, and for the ends catherd made, naming the limit it hit", () => {
    expect(judgeEnding(exit("exited", 2), emptySummary()).failure?.message).toBe("exit code 2");
    expect(judgeEnding(exit("exited", null, { signal: "SIGSEGV" }), emptySummary()).failure?.message).toBe(
      "ended by SIGSEGV",
    );
    const said = folded({ progress: true, error: error("quota") });
    const limits = { idleMs: 2000, wallMs: 5_400_000 };
    expect(
      judgeEnding(exit("idle-timeout", null, { signal: "SIGTERM", limits }), said).failure?.message,
    ).toBe("no output for 2s (--idle 2s)");
    expect(
      judgeEnding(exit("wall-timeout", null, { signal: "SIGTERM", limits }), said).failure?.message,
    ).toBe("still running after 1h30m (--wall 1h30m)");
    expect(judgeEnding(exit("idle-timeout", null), said).failure?.message).toBe(
      "no output for longer than --idle",
    );
    expect(judgeEnding(exit("cancelled", null, { signal: "SIGTERM" }), said).failure?.message).toBe(
      "stopped on request (catherd cancel)",
    );
    expect(judgeEnding(exit("lost", null), said).failure?.message).toBe(
      "its supervisor is gone and left no account of the end",
    );
  });

  it("redacts secrets and caps the message at 2,000 characters", () => {
    const summary = folded({
      progress: true,
      error: error("auth", `bad key sk-proj-abcdefghijklmnop ${"x".repeat(5000)}`),
    });
    const message = judgeEnding(exit("exited", 1), summary).failure?.message ?? "";
    expect(message).toMatch(/^bad key \[redacted\] x+…$/);
    expect(message.length).toBe(MAX_MESSAGE_CHARS);
  });
});

describe("judgeEnding: when to come back", () => {
  it("places a delay at the line's own time, or else at the end of the dispatch", () => {
    const placed = folded({
      progress: true,
      error: error("rate-limit", "x", { retryAfter: { delayMs: 60_000, fromMs: 0 } }),
    });
    expect(judgeEnding(exit("exited", 1), placed).failure?.retryAfter).toBe("1970-01-01T00:01:00.000Z");
    const bare = folded({
      progress: true,
      error: error("rate-limit", "x", { retryAfter: { delayMs: 60_000, fromMs: null } }),
    });
    expect(judgeEnding(exit("exited", 1, { endedAtMs: 1000 }), bare).failure?.retryAfter).toBe(
      "1970-01-01T00:01:01.000Z",
    );
    expect(judgeEnding(exit("exited", 1), bare).failure?.retryAfter).toBeNull();
  });

  it("keeps a time placed by its line over a later bare delay", () => {
    const summary = folded(
      { progress: true, error: error("quota", "x", { retryAfter: { atMs: 5000 } }) },
      { progress: false, error: error(null, "y", { retryAfter: { delayMs: 1, fromMs: null } }) },
    );
    expect(judgeEnding(exit("exited", 1, { endedAtMs: 0 }), summary).failure?.retryAfter).toBe(
      "1970-01-01T00:00:05.000Z",
    );
  });

  it("says no time for a kind that waiting does not heal", () => {
    const summary = folded({ progress: true, error: error("auth", "x", { retryAfter: { atMs: 5000 } }) });
    expect(judgeEnding(exit("exited", 1), summary).failure?.retryAfter).toBeNull();
  });

  it("turns a time that is no time into null", () => {
    expect(retryAfterTime({ atMs: Number.POSITIVE_INFINITY }, null)).toBeNull();
    expect(retryAfterTime(null, 0)).toBeNull();
  });
});

describe("redaction", () => {
  it.each([
    ["Incorrect API key provided: sk-proj-AbCdEf1234567890.", "Incorrect API key provided: [redacted]."],
    ["key sk-ant-api03-abcdefghijkl", "key [redacted]"],
    ["Authorization: Bearer eyJhbGciOi.abc.def123", "Authorization: Bearer [redacted]"],
    ['{"x-api-key":"abcd1234efgh"}', '{"x-api-key":"[redacted]"}'],
    ["api_key=hunter22secret&x=1", "api_key=[redacted]&x=1"],
    [
      "GET https://host/v1/models?key=AIzaSyA1234567890abcdefghijk&alt=sse",
      "GET https://host/v1/models?key=[redacted]&alt=sse",
    ],
    ["token ghp_abcdefghijklmnopqrstuvwxyz0123", "token [redacted]"],
    ["AWS AKIAABCDEFGHIJKLMNOP used", "AWS [redacted] used"],
    [
      "The input token count (1200000) exceeds the maximum",
      "The input token count (1200000) exceeds the maximum",
    ],
    ["invalid x-api-key", "invalid x-api-key"],
  ])("redacts %j", (text, want) => {
    expect(redact(text)).toBe(want);
  });

  it("hides an environment's values named like secrets whole, and secret shapes in the others", () => {
    expect(
      redactEnv({
        API_TOKEN: "written-but-redacted",
        db_password_file: "/run/pw",
        BASE_URL: "https://host/v1?key=AIzaSyA1234567890abcdefghijk",
        ANTHROPIC_AUTH: "sk-ant-api03-abcdefghijkl",
        MODE: "fast",
      }),
    ).toEqual({
      API_TOKEN: "[redacted]",
      db_password_file: "[redacted]",
      BASE_URL: "https://host/v1?key=[redacted]",
      ANTHROPIC_AUTH: "[redacted]",
      MODE: "fast",
    });
  });

  it("strips terminal colours", () => {
    expect(inertText("\u001b[91m\u001b[1mError: \u001b[0mSession not found")).toBe(
      "Error: Session not found",
    );
    expect(cleanMessage("  \u001b[1mbold\u001b[0m  ")).toBe("bold");
  });
});

describe("the stderr tail a record keeps", () => {
  it("keeps the last 20 non-empty lines, without colours, secrets redacted", () => {
    const lines = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? "   " : `line ${i}`));
    lines.push("\u001b[91mError:\u001b[0m bad key sk-ant-abcdefghijklmnop", "");
    const tail = recordTail(lines);
    expect(tail).toHaveLength(20);
    expect(tail.at(-1)).toBe("Error: bad key [redacted]");
    expect(tail[0]).toBe("line 2");
    expect(tail.every((l) => l.trim() !== "")).toBe(true);
  });

  it("drops the oldest lines to fit in 4 KiB, and cuts a single line too long", () => {
    const tail = recordTail(Array.from({ length: 10 }, (_, i) => `${i}${"é".repeat(600)}`));
    const bytes = tail.reduce((sum, l) => sum + new TextEncoder().encode(l).length + 1, 0);
    expect(bytes).toBeLessThanOrEqual(TAIL_BYTES);
    expect(tail.at(-1)?.startsWith("9")).toBe(true);
    expect(tail.length).toBeLessThan(10);
    const [one] = recordTail(["x".repeat(10_000)]);
    expect(new TextEncoder().encode(one ?? "").length).toBeLessThanOrEqual(TAIL_BYTES);
    expect(one?.endsWith("…")).toBe(true);
  });

  it("is empty for an empty or blank stderr", () => {
    expect(recordTail([])).toEqual([]);
    expect(recordTail(["", "  ", "\t"])).toEqual([]);
  });
});
