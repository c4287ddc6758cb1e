import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  type ExitFacts,
  type JudgeRules,
  judgeEnding,
  type Sighting,
} from "../../src/domain/ending/ending.js";
import type { ErrorFact } from "../../src/domain/ending/failure.js";
import { addFacts, emptySummary, type StreamSummary } from "../../src/domain/ending/summary.js";
import type { ErrorKind, Status } from "../../src/domain/vocab.js";

// specs/record.md, "Status precedence: the kind first", is the contract of src/domain/ending/ending.ts: each row
// of its numbered list is a row here, named by the spec's own words, and every kind of its table is the
// verdict of at least one row, with the table's status.

const success = { isError: false, message: null };
const failure = (kind: ErrorKind | null): ErrorFact => ({
  message: `${kind} words`,
  kind,
  status: null,
  words: "cli",
  retryAfter: null,
});
const retry = (kind: ErrorKind) => ({ attempt: 1, max: 5, message: `retry (${kind})`, status: null, kind });

function folded(...lines: Parameters<typeof addFacts>[1][]): StreamSummary {
  const summary = emptySummary();
  for (const facts of lines) addFacts(summary, facts);
  return summary;
}
const exit = (
  reason: ExitFacts["reason"],
  code: number | null,
  extra: Partial<ExitFacts> = {},
): ExitFacts => ({
  reason,
  code,
  signal: null,
  ...extra,
});
const said = (code: "E_IO_WRITE" | "E_AGENT_OOM", message = "catherd's words") => ({ code, message });
const succeeded = folded({ progress: true, final: success });
const answered = (kind: "answer-invalid" | "answer-over-limit") => ({ kind, message: `${kind} words` });
const gemini: JudgeRules = {
  needsFinal: true,
  kindOfExitCode: (code) => (code === 173 ? "rate-limit" : null),
};

interface Row {
  /** The spec's row, in its words. */
  row: string;
  exit: ExitFacts;
  summary: StreamSummary;
  rules?: JudgeRules;
  kind: ErrorKind | null;
  status: Status;
}

const ROWS: Row[] = [
  {
    row: "1. before all: an agent the OOM killer ended → oom, whatever the stream said",
    exit: exit("exited", null, { signal: "SIGKILL", kind: "oom", error: said("E_AGENT_OOM") }),
    summary: succeeded,
    kind: "oom",
    status: "failed",
  },
  {
    row: "1. before all: a job its engine ended for its memory → oom, though its reason is lost",
    exit: exit("lost", null, { kind: "oom", error: said("E_AGENT_OOM") }),
    summary: emptySummary(),
    kind: "oom",
    status: "failed",
  },
  {
    row: "1. before all: a dispatch that ended with its disk full → disk, whatever the stream said",
    exit: exit("exited", 0, { kind: "disk", error: said("E_IO_WRITE") }),
    summary: succeeded,
    kind: "disk",
    status: "failed",
  },
  {
    row: "1. disk whatever the reason, lost included: the status is failed, not lost",
    exit: exit("lost", null, { kind: "disk", error: said("E_IO_WRITE") }),
    summary: emptySummary(),
    kind: "disk",
    status: "failed",
  },
  {
    row: "1. cancelled → cancelled",
    exit: exit("cancelled", 0),
    summary: succeeded,
    kind: "cancelled",
    status: "cancelled",
  },
  {
    row: "1. wall-timeout → timeout, even if the CLI then printed a successful answer",
    exit: exit("wall-timeout", 0),
    summary: succeeded,
    kind: "timeout",
    status: "timeout",
  },
  {
    row: "1. spawn-failed → spawn",
    exit: exit("spawn-failed", null),
    summary: emptySummary(),
    kind: "spawn",
    status: "failed",
  },
  {
    row: "1. supervisor-error → supervisor",
    exit: exit("supervisor-error", null),
    summary: emptySummary(),
    kind: "supervisor",
    status: "failed",
  },
  { row: "1. lost → lost", exit: exit("lost", null), summary: succeeded, kind: "lost", status: "lost" },
  {
    row: "1. budget → budget",
    exit: exit("budget", null, { signal: "SIGTERM" }),
    summary: emptySummary(),
    kind: "budget",
    status: "limit",
  },
  {
    row: "2. idle-timeout: a provider retry that was the last sign of life → that retry's kind",
    exit: exit("idle-timeout", null, { kind: "provider-down" }),
    summary: emptySummary(),
    kind: "provider-down",
    status: "limit",
  },
  {
    row: "2. idle-timeout: else timeout",
    exit: exit("idle-timeout", null, { kind: null }),
    summary: folded({ progress: false, retry: retry("rate-limit") }),
    kind: "timeout",
    status: "timeout",
  },
  {
    row: "3. provider-unavailable: the kind the supervisor ended the dispatch for",
    exit: exit("provider-unavailable", null, { kind: "quota" }),
    summary: emptySummary(),
    kind: "quota",
    status: "limit",
  },
  {
    row: "3. provider-unavailable: else the last retry's kind",
    exit: exit("provider-unavailable", null),
    summary: folded({ progress: false, retry: retry("rate-limit") }),
    kind: "rate-limit",
    status: "limit",
  },
  {
    row: "3. provider-unavailable: else the last failure's (a context overflow it saw again)",
    exit: exit("provider-unavailable", null),
    summary: folded({ progress: true, error: failure("context") }),
    kind: "context",
    status: "failed",
  },
  {
    row: "3. provider-unavailable: else provider-down",
    exit: exit("provider-unavailable", null),
    summary: emptySummary(),
    kind: "provider-down",
    status: "limit",
  },
  {
    row: "4. a successful terminal event is ok (rate-limited, retried and then succeeded)",
    exit: exit("exited", 1),
    summary: folded({ progress: false, retry: retry("rate-limit") }, { progress: true, final: success }),
    kind: null,
    status: "ok",
  },
  {
    row: "4. an after-final without a terminal event is ok",
    exit: exit("after-final", null, { signal: "SIGTERM" }),
    summary: emptySummary(),
    kind: null,
    status: "ok",
  },
  {
    row: "4. an exit 0 without a terminal event is ok",
    exit: exit("exited", 0),
    summary: emptySummary(),
    kind: null,
    status: "ok",
  },
  {
    row: "4. not for gemini, which exits 0 when sent SIGTERM: without a result it did not succeed",
    exit: exit("exited", 0),
    summary: emptySummary(),
    rules: gemini,
    kind: "cli",
    status: "failed",
  },
  {
    row: "4. otherwise the kind the terminal error event proves",
    exit: exit("exited", 1),
    summary: folded(
      { progress: true, error: failure("model") },
      { progress: true, final: { isError: true, message: "x" }, error: failure("auth") },
    ),
    kind: "auth",
    status: "failed",
  },
  {
    row: "4. else the last failure that proves one",
    exit: exit("exited", 1),
    summary: folded({ progress: true, error: failure("resume") }, { progress: true, error: failure(null) }),
    kind: "resume",
    status: "failed",
  },
  {
    row: "4. else the kind of a provider retry that was the last sign of life",
    exit: exit("exited", 1),
    summary: folded({ progress: false, retry: retry("rate-limit") }),
    kind: "rate-limit",
    status: "limit",
  },
  {
    row: "4. else what the exit code proves (gemini's: the HTTP status modulo 256)",
    exit: exit("exited", 173),
    summary: emptySummary(),
    rules: gemini,
    kind: "rate-limit",
    status: "limit",
  },
  { row: "4. else cli", exit: exit("exited", 2), summary: emptySummary(), kind: "cli", status: "failed" },
  {
    row: "4. a terminal event's error flag wins over its subtype (is_error with subtype success fails)",
    exit: exit("exited", 0),
    summary: folded({ progress: true, final: { isError: true, message: "success, but an error" } }),
    kind: "cli",
    status: "failed",
  },
  {
    row: "The answer: an answer that does not fit --answer-schema fails an ok ending (answer-invalid)",
    exit: exit("exited", 0, { answer: answered("answer-invalid") }),
    summary: succeeded,
    kind: "answer-invalid",
    status: "failed",
  },
  {
    row: "The answer: an answer over catherd's limits fails an ok ending (answer-over-limit)",
    exit: exit("exited", 0, { answer: answered("answer-over-limit") }),
    summary: succeeded,
    kind: "answer-over-limit",
    status: "failed",
  },
  {
    row: "The answer: only an ok ending has an answer; any other keeps its status and kind",
    exit: exit("exited", 1, { answer: answered("answer-invalid") }),
    summary: folded({ progress: true, error: failure("quota") }),
    kind: "quota",
    status: "limit",
  },
  {
    row: "verify: a check still red fails an ok ending (verify)",
    exit: exit("exited", 0, { check: { kind: "verify", message: "the check failed" } }),
    summary: succeeded,
    kind: "verify",
    status: "failed",
  },
  {
    row: "verify: a check that could not judge fails an ok ending (verify-error)",
    exit: exit("after-final", 0, { check: { kind: "verify-error", message: "past its limit" } }),
    summary: succeeded,
    kind: "verify-error",
    status: "failed",
  },
  {
    row: "verify: a check a cancel stopped makes an ok ending cancelled",
    exit: exit("exited", 0, { check: { kind: "cancelled", message: "cancelled while the check ran" } }),
    summary: succeeded,
    kind: "cancelled",
    status: "cancelled",
  },
  {
    row: "verify: an answer that does not fit is judged before the check",
    exit: exit("exited", 0, {
      answer: answered("answer-invalid"),
      check: { kind: "verify", message: "the check failed" },
    }),
    summary: succeeded,
    kind: "answer-invalid",
    status: "failed",
  },
  {
    row: "verify: a turn that did not end ok keeps its kind, whatever the check",
    exit: exit("exited", 1, { check: { kind: "verify", message: "the check failed" } }),
    summary: folded({ progress: true, error: failure("quota") }),
    kind: "quota",
    status: "limit",
  },
  {
    row: "A record always comes: catherd's own error while it built the record → record",
    exit: exit("exited", 0, { unbuilt: "a bug" }),
    summary: succeeded,
    kind: "record",
    status: "failed",
  },
  // The table's kinds that only a CLI's words prove (backends.md): each row's status, from its words.
  ...(
    [
      ["auth", "missing, invalid or expired credentials; no access (401, 403)", "failed"],
      ["quota", "credit, billing or usage cap exhausted", "limit"],
      ["rate-limit", "a transient 429", "limit"],
      ["provider-down", "5xx, 529, overloaded, no answer", "limit"],
      ["model", "unknown model, or not available to this account", "failed"],
      ["context", "prompt or conversation too long", "failed"],
      ["request", "any other refusal of the request", "failed"],
      ["resume", "the thread or session to resume does not exist", "failed"],
    ] as const
  ).map(([kind, words, status]) => ({
    row: `the table: \`${kind}\`, ${words} → ${status}`,
    exit: exit("exited", 1),
    summary: folded({ progress: true, error: failure(kind) }),
    kind,
    status,
  })),
];

describe("specs/record.md's status precedence, row by row", () => {
  for (const r of ROWS) {
    it(r.row, () => {
      const got = judgeEnding(r.exit, r.summary, r.rules);
      expect(got.status).toBe(r.status);
      expect(got.failure?.kind ?? null).toBe(r.kind);
    });
  }

  it("has a row for every kind of the spec's table, with the table's status", () => {
    const spec = fs.readFileSync(path.join(import.meta.dirname, "../../specs/record.md"), "utf8");
    const table = [...spec.matchAll(/^\| `([a-z-]+)` +\|.*\| `([a-z]+)` +\|$/gm)].map((m) => [m[1], m[2]]);
    expect(table.length).toBeGreaterThan(15);
    for (const [kind, status] of table) {
      const covering = ROWS.filter((r) => r.kind === kind);
      expect(covering.length, `a row for kind ${kind}`).toBeGreaterThan(0);
      for (const r of covering) expect(r.status, kind).toBe(status);
    }
  });
});

/** What the supervisor (or a reader) saw, and the account exit.json keeps of it. */
interface LiveRow {
  row: string;
  exit: ExitFacts;
  kind: ErrorKind | null;
  code: string | null;
  message?: string;
}

const live = (reason: ExitFacts["reason"], seen: Sighting, extra: Partial<ExitFacts> = {}): ExitFacts => ({
  reason,
  code: null,
  signal: null,
  seen,
  ...extra,
});
const engineWords = {
  name: "slurm",
  jobId: "6",
  state: "OUT_OF_MEMORY",
  words: "slurm job 6 OUT_OF_MEMORY",
} as const;
const oom = (kills: number) => ({ oom: { kills, memoryBytes: 64 * 1024 * 1024 } });

const LIVE_ROWS: LiveRow[] = [
  {
    row: "an agent SIGKILLed while its cgroup counted an OOM kill → oom, E_AGENT_OOM naming the limit",
    exit: live("exited", oom(1), { signal: "SIGKILL" }),
    kind: "oom",
    code: "E_AGENT_OOM",
    message: "the agent was killed by the OOM killer: its dispatch reached its memory limit of 64M",
  },
  {
    row: "an adopted agent (its exit unknown) with an OOM kill counted → oom",
    exit: live("exited", oom(2)),
    kind: "oom",
    code: "E_AGENT_OOM",
  },
  {
    row: "SIGKILLed without an OOM kill is no oom",
    exit: live("exited", oom(0), { signal: "SIGKILL" }),
    kind: null,
    code: null,
  },
  {
    row: "an exit 1 though a child was OOM-killed is no oom",
    exit: live("exited", oom(1), { code: 1 }),
    kind: null,
    code: null,
  },
  {
    row: "an agent stopped by a limit, not by the kernel, is no oom",
    exit: live("idle-timeout", oom(1), { signal: "SIGKILL" }),
    kind: null,
    code: null,
  },
  {
    row: "the watch's kind is kept (the refusal it ended early, the retry before going quiet)",
    exit: live("provider-unavailable", { watchKind: "auth" }),
    kind: "auth",
    code: null,
  },
  {
    row: "a cap on spending stops it: code budget, the cap's words",
    exit: live("budget", { watchKind: null, budget: "used 51,230 tokens of --max-tokens 50000" }),
    kind: null,
    code: "budget",
    message: "used 51,230 tokens of --max-tokens 50000",
  },
  {
    row: "a signal to the supervisor: cancelled, E_SUPERVISOR_SIGNALLED",
    exit: live("cancelled", { signalled: "SIGTERM" }),
    kind: null,
    code: "E_SUPERVISOR_SIGNALLED",
    message: "the supervisor received SIGTERM",
  },
  {
    row: "a full disk stops the agent: disk, E_IO_WRITE, whatever else it saw",
    exit: live("cancelled", {
      diskFull: { message: "no space left on /srv" },
      signalled: "SIGTERM",
      ...oom(1),
    }),
    kind: "disk",
    code: "E_IO_WRITE",
  },
  {
    row: "its engine ended the job for its memory: the engine's reason, kind oom and words",
    exit: live("exited", {
      engine: { reason: "lost", kind: "oom", code: "E_AGENT_OOM", words: engineWords },
    }),
    kind: "oom",
    code: "E_AGENT_OOM",
    message: "slurm job 6 OUT_OF_MEMORY",
  },
  {
    row: "its engine's end that reached the supervisor as a signal: E_SUPERVISOR_SIGNALLED, the engine's words",
    exit: live("cancelled", {
      signalled: "SIGTERM",
      engine: {
        reason: "cancelled",
        kind: "cancelled",
        code: "cancelled",
        words: { ...engineWords, state: "CANCELLED" },
      },
    }),
    kind: null,
    code: "E_SUPERVISOR_SIGNALLED",
  },
  {
    row: "exit.json written through the reserve: disk, E_IO_WRITE, over a budget stop",
    exit: live("budget", { budget: "used $5.12 of --max-cost 5", exitOnFullDisk: "no space left on /srv" }),
    kind: "disk",
    code: "E_IO_WRITE",
    message:
      "no space left on /srv: the dispatch ended (budget) with its disk full, its output may lack its last lines",
  },
  {
    row: "exit.json written through the reserve after a stop for the disk keeps that stop's words",
    exit: live("exited", {
      diskFull: { message: "stopped for the disk" },
      exitOnFullDisk: "no space left on /srv",
    }),
    kind: "disk",
    code: "E_IO_WRITE",
    message: "stopped for the disk",
  },
  {
    row: "a reader finds a supervisor gone: its words",
    exit: live("lost", {
      said: { code: "E_SUPERVISOR_LOST", message: "supervisor 7 is gone and left no exit.json" },
    }),
    kind: null,
    code: "E_SUPERVISOR_LOST",
  },
];

describe("exit.json's account: what the supervisor saw, by the same precedence", () => {
  for (const r of LIVE_ROWS) {
    it(r.row, () => {
      const got = judgeEnding(r.exit, null);
      expect(got.kind).toBe(r.kind);
      expect(got.said?.code ?? null).toBe(r.code);
      if (r.message !== undefined) expect(got.said?.message).toBe(r.message);
    });
  }

  it("gives the record from exit.json the verdict it gives from what the supervisor saw", () => {
    const streams = [emptySummary(), succeeded, folded({ progress: true, error: failure("auth") })];
    for (const r of LIVE_ROWS) {
      const account = judgeEnding(r.exit, null);
      const written: ExitFacts = {
        reason: account.reason,
        code: r.exit.code,
        signal: r.exit.signal,
        kind: account.kind,
        error: account.said,
      };
      for (const summary of streams) {
        expect(judgeEnding(written, summary), r.row).toEqual(judgeEnding(r.exit, summary));
      }
    }
  });
});
