import { compactDuration } from "./duration.js";
import { type Failure, retryAfterTime, statusOfKind } from "./failure.js";
import { cleanMessage } from "./redact.js";
import type { StreamSummary } from "./summary.js";
import type { ErrorKind, ExitReason, Status } from "./vocab.js";

/** How the supervised process ended, as the record's precedence needs it. */
export interface ExitFacts {
  reason: ExitReason;
  code: number | null;
  signal: string | null;
  /**
   * The kind the supervisor ended the dispatch for: a refusal it ended early, the retry it saw last before
   * going quiet. Null: the supervisor saw none. Absent (a reader's exit.json): worked out from the stream.
   */
  kind?: ErrorKind | null;
  /** When the dispatch ended (ms since the epoch): where a delay said without a time of its own counts from. */
  endedAtMs?: number | null;
  /** The limits it ran under (spec.json, defaults applied), so that a timeout names the one it hit. */
  limits?: { idleMs: number; wallMs: number };
}

/** What a backend adds to the common judgement. */
export interface JudgeRules {
  /** Only a successful terminal event is success (gemini exits 0 when sent SIGTERM). */
  needsFinal?: boolean;
  /** What an exit code says about the kind, as evidence only (gemini's HTTP status modulo 256). */
  kindOfExitCode?: (code: number) => ErrorKind | null;
}

/** The record's verdict: its status and, for anything but `ok`, why. */
export interface Judgement {
  status: Status;
  failure: Failure | null;
}

/** The kinds that stand for how catherd ended (or lost) the dispatch, by exit reason. */
const KIND_OF_REASON: Partial<Record<ExitReason, ErrorKind>> = {
  cancelled: "cancelled",
  "wall-timeout": "timeout",
  "spawn-failed": "spawn",
  "supervisor-error": "supervisor",
  lost: "lost",
  budget: "budget",
};

/** The kinds waiting on the provider would heal: their retry time is worth keeping. */
const COME_BACK_LATER: ReadonlySet<ErrorKind> = new Set(["quota", "rate-limit", "provider-down"]);

/**
 * The verdict of a dispatch, by the written precedence (specs/record.md): how catherd ended it first
 * (cancelled, wall, spawn, supervisor, lost), then what the supervisor saw the provider say (an early end,
 * a retry before going quiet), then a successful terminal event (a dispatch that retried a 429 and then
 * succeeded is `ok`), then the failures the CLI reported, the last retry, the exit code's own evidence,
 * and last `cli` for a non-zero exit. The status follows the kind.
 */
export function judgeEnding(exit: ExitFacts, summary: StreamSummary, rules: JudgeRules = {}): Judgement {
  // The OOM killer ended the agent at its dispatch's memory limit (its cgroup counted the kill, or its
  // engine ended the job for its memory): whatever the stream last said, that is why it ended.
  if (exit.kind === "oom") return failed("oom", exit, summary, describeExit(exit));
  // The disk could no longer keep the dispatch's files (the supervisor stopped the agent for it, or could
  // not write exit.json): the stream may lack its last lines, and its verdict counts for nothing.
  if (exit.kind === "disk") return failed("disk", exit, summary, describeExit(exit));
  const fixed = KIND_OF_REASON[exit.reason];
  if (fixed !== undefined) return failed(fixed, exit, summary, describeExit(exit));
  // The kind of the retry the CLI was last seen waiting on: the supervisor's account, else the stream's.
  const pending = summary.retryPending ? (summary.lastRetry?.kind ?? null) : null;
  const retryKind = exit.kind === undefined ? pending : exit.kind;
  if (exit.reason === "idle-timeout")
    return failed(retryKind ?? "timeout", exit, summary, describeExit(exit));
  if (exit.reason === "provider-unavailable") {
    // Without the supervisor's account: the retry streak it counted, else the refusal it saw, else down.
    const kind = exit.kind ?? summary.lastRetry?.kind ?? summary.lastKnownError?.kind ?? "provider-down";
    return failed(kind, exit, summary, describeExit(exit));
  }
  // exited or after-final: the CLI's own account.
  if (summary.final !== null) {
    if (!summary.final.isError) return { status: "ok", failure: null };
  } else if (exit.reason === "after-final") {
    return { status: "ok", failure: null };
  } else if (!rules.needsFinal && exit.code === 0 && exit.signal === null) {
    return { status: "ok", failure: null };
  }
  const kind =
    summary.finalError?.kind ??
    summary.lastKnownError?.kind ??
    retryKind ??
    (exit.code === null ? null : (rules.kindOfExitCode?.(exit.code) ?? null)) ??
    "cli";
  return failed(kind, exit, summary, describeExit(exit));
}

function failed(kind: ErrorKind, exit: ExitFacts, summary: StreamSummary, fallback: string): Judgement {
  const retryAfter = COME_BACK_LATER.has(kind)
    ? retryAfterTime(summary.retryAfter, exit.endedAtMs ?? null)
    : null;
  return {
    status: statusOfKind(kind),
    failure: { kind, message: cleanMessage(messageFor(kind, summary) ?? fallback), retryAfter },
  };
}

/**
 * The most specific words for a kind: the provider's own, as the CLI surfaced them; else the CLI's
 * terminal error, its last error of that kind, its last retry or its last error line. Null for the kinds
 * catherd gave (timeout, cancelled…): the CLI's words do not explain those.
 */
function messageFor(kind: ErrorKind, summary: StreamSummary): string | null {
  if (KIND_OF_CATHERD.has(kind)) return null;
  const deciding = summary.finalError ?? summary.lastKnownError;
  if (deciding !== null && deciding.kind === kind && deciding.words === "provider") return deciding.message;
  const provider = summary.providerWords[kind];
  if (provider !== undefined) return provider;
  if (deciding !== null && deciding.kind === kind) return deciding.message;
  if (summary.lastRetry !== null && summary.lastRetry.kind === kind) return summary.lastRetry.message;
  if (summary.final?.isError === true && summary.final.message !== null) return summary.final.message;
  return summary.lastError?.message ?? null;
}

const KIND_OF_CATHERD: ReadonlySet<ErrorKind> = new Set([
  "timeout",
  "cancelled",
  "spawn",
  "supervisor",
  "lost",
  "oom",
  "disk",
]);

/**
 * How a dispatch ended, in words, for one that nothing else explains — what catherd did and the limit it
 * acted on ("no output for 2s (--idle 2s)"), else how the agent's process ended ("exit code 2", "ended by
 * SIGSEGV"). Said next to the kind ("timeout — no output for 2s (--idle 2s)"), so it never repeats it.
 */
export function describeExit(exit: ExitFacts): string {
  const idle = exit.limits?.idleMs;
  const wall = exit.limits?.wallMs;
  switch (exit.reason) {
    case "idle-timeout":
      return idle === undefined
        ? "no output for longer than --idle"
        : `no output for ${compactDuration(idle)} (--idle ${compactDuration(idle)})`;
    case "wall-timeout":
      return wall === undefined
        ? "still running past --wall"
        : `still running after ${compactDuration(wall)} (--wall ${compactDuration(wall)})`;
    case "cancelled":
      return "stopped on request (catherd cancel)";
    case "lost":
      return "its supervisor is gone and left no account of the end";
    default:
      break;
  }
  if (exit.signal !== null) return `ended by ${exit.signal}`;
  if (exit.code !== null) return `exit code ${exit.code}`;
  return exit.reason;
}

/** The record's status alone (specs/record.md). */
export function statusByPrecedence(exit: ExitFacts, summary: StreamSummary, rules?: JudgeRules): Status {
  return judgeEnding(exit, summary, rules).status;
}
