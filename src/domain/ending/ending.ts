import type { CheckProblem } from "../check/check.js";
import type { EngineWords } from "../file-fields.js";
import { spentUntil } from "../spend/quota.js";
import { cleanMessage } from "../text/redact.js";
import { formatSize } from "../text/size.js";
import type { EndingErrorCode, ErrorKind, ExitReason, Status } from "../vocab.js";
import { describeExit, messageFor } from "./ending-words.js";
import { type Failure, retryAfterTime, statusOfKind } from "./failure.js";
import { emptySummary, type StreamSummary } from "./summary.js";

// How a dispatch ended — its exit reason, kind, status, error code and words — decided in one place, by
// the precedence of specs/record.md ("Status precedence"), whose rows are this module's table test. The
// supervisor calls it with what it saw (`seen`) for exit.json; the record calls it with exit.json's
// account and the folded streams; the record's fallback, the answer's check and a reader that records a
// lost dispatch call it with their facts. The account the supervisor wrote is the precedence's first rows,
// so the record reaches the verdict the supervisor wrote and never decides it anew.

/** catherd's own code and words on how a dispatch ended: exit.json's `error`. */
export interface EndingWords {
  code: EndingErrorCode;
  message: string;
  /** What the engine said of the job it ended, for a supervisor an engine placed. */
  engine?: EngineWords | undefined;
}

/** The engine that placed a supervisor ended its job: its words, and the ending they make. */
export interface EngineAccount {
  words: EngineWords;
  /** The exit reason, kind and code the engine's state makes (src/engines, "States and reasons"). */
  reason: ExitReason;
  kind: ErrorKind;
  code: EndingErrorCode;
}

/** What catherd saw of the end itself: the supervisor at its stop, or a reader recording a lost dispatch. */
export interface Sighting {
  /** The kind of the provider's words the watch stopped for (watch.ts `decide`); null or absent: none. */
  watchKind?: ErrorKind | null;
  /** The disk could not keep the dispatch's files: the words, and the code when not E_IO_WRITE. */
  diskFull?: { message: string; code?: EndingErrorCode };
  /** A cap on spending stopped the agent: the cap's message ("used 51,230 tokens of --max-tokens 50000"). */
  budget?: string;
  /** The supervisor received this signal: its cancel is the signal's. */
  signalled?: string;
  /** The engine that placed the supervisor ended its job. */
  engine?: EngineAccount;
  /**
   * catherd's own code and words on an end it met: its own error (spawn-failed, supervisor-error), a
   * supervisor a reader found gone.
   */
  said?: EndingWords;
  /** The agent's cgroup: the OOM kills it counted, and the dispatch's memory limit. */
  oom?: { kills: number; memoryBytes: number | null };
  /** exit.json could be written only through the reserve: the words of the full disk. */
  exitOnFullDisk?: string;
}

/** The answer's check changed an `ok` ending (specs/record.md, "The answer"). */
export interface AnswerProblem {
  kind: "answer-invalid" | "answer-over-limit";
  message: string;
}

/** How the supervised process ended, and every fact the precedence weighs. */
export interface ExitFacts {
  reason: ExitReason;
  code: number | null;
  signal: string | null;
  /**
   * The kind the supervisor ended the dispatch for: a refusal it ended early, the retry it saw last before
   * going quiet, oom, disk. Null: the supervisor saw none. Absent (a reader's exit.json): worked out from
   * the stream.
   */
  kind?: ErrorKind | null | undefined;
  /** exit.json's error: catherd's own code and words, which win over the stream's. */
  error?: EndingWords | null;
  /** When the dispatch ended (ms since the epoch): where a delay said without a time of its own counts from. */
  endedAtMs?: number | null;
  /** The limits it ran under (spec.json, defaults applied), so that a timeout names the one it hit. */
  limits?: { idleMs: number; wallMs: number };
  /** What catherd saw of the end, for the one that writes exit.json; absent: exit.json's account stands. */
  seen?: Sighting;
  /** What was used of `--max-cost` ("used $0.0069 of --max-cost 0.001"), before the CLI's budget words. */
  capUsed?: string | null;
  /** The answer's check, for an ending that is otherwise `ok`. */
  answer?: AnswerProblem | null;
  /** The check's (`--verify`), for an ending that is otherwise `ok` with an answer that holds. */
  check?: CheckProblem | null;
  /** The record could not be built: catherd's words on why (specs/record.md, "A record always comes"). */
  unbuilt?: string;
}

/** What a backend adds to the common judgement. */
export interface JudgeRules {
  /** Only a successful terminal event is success (gemini exits 0 when sent SIGTERM). */
  needsFinal?: boolean;
  /** What an exit code says about the kind, as evidence only (gemini's HTTP status modulo 256). */
  kindOfExitCode?: (code: number) => ErrorKind | null;
}

/** record.json's error, without the stderr tail the record adds. */
export interface EndingError extends Failure {
  code: EndingErrorCode;
  engine?: EngineWords | undefined;
}

/** The verdict: exit.json's part (`reason`, `kind`, `error`) and the record's (`status`, `failure`). */
export interface Judgement {
  reason: ExitReason;
  status: Status;
  /** exit.json's `kind`: the account of the supervisor (or reader) that ended it; undefined: none kept. */
  kind: ErrorKind | null | undefined;
  /** exit.json's `error`: catherd's own code and words; null: none. */
  said: EndingWords | null;
  /** record.json's error, for anything but `ok`. */
  failure: EndingError | null;
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
 * The verdict of a dispatch, by the written precedence (specs/record.md): catherd's own account first —
 * what the supervisor saw (`seen`: a full disk, the engine's end, the OOM killer) or what exit.json keeps
 * of it — then how catherd ended it (cancelled, wall, spawn, supervisor, lost, budget), then what the
 * supervisor saw the provider say (an early end, a retry before going quiet), then a successful terminal
 * event (a dispatch that retried a 429 and then succeeded is `ok`, unless its answer does not hold), then
 * the failures the CLI reported, the last retry, the exit code's own evidence, and last `cli`. The status
 * follows the kind. `summary`: the folded streams; null for the supervisor's exit.json, which keeps
 * catherd's account alone (the stream is the record's to read).
 */
export function judgeEnding(
  exit: ExitFacts,
  summary: StreamSummary | null,
  rules: JudgeRules = {},
): Judgement {
  const account = accountOf(exit);
  const facts: ExitFacts = { ...exit, reason: account.reason, kind: account.kind, error: account.said };
  const stream = summary ?? emptySummary();
  const kind = kindOf(facts, stream, rules);
  const base = { reason: account.reason, kind: account.kind, said: account.said };
  if (kind === null) return { ...base, status: "ok", failure: null };
  return { ...base, status: statusOfKind(kind), failure: failed(kind, facts, stream) };
}

/** exit.json's part of the verdict: its reason, its kind and catherd's words. */
interface Account {
  reason: ExitReason;
  kind: ErrorKind | null | undefined;
  said: EndingWords | null;
}

/** catherd's account: what it saw, when it saw the end itself; else what exit.json keeps. */
function accountOf(exit: ExitFacts): Account {
  const seen = exit.seen;
  if (seen === undefined) return { reason: exit.reason, kind: exit.kind, said: exit.error ?? null };
  const account = sightedAccount(exit, seen);
  // exit.json kept only through the reserve: the stream may lack its last lines, whatever the end was.
  if (seen.exitOnFullDisk === undefined || account.kind === "disk") return account;
  const message = `${seen.exitOnFullDisk}: the dispatch ended (${account.reason}) with its disk full, its output may lack its last lines`;
  return { ...account, kind: "disk", said: { code: "E_IO_WRITE", message } };
}

/**
 * What the supervisor (or a reader) saw makes the account: a full disk first (its files could not be
 * kept), then the engine's end of its job, then catherd's own words (a budget stop, a signal, its own
 * error), then the OOM killer for an agent that ended by itself without them, then the watch's kind.
 */
function sightedAccount(exit: ExitFacts, seen: Sighting): Account {
  const reason = exit.reason;
  if (seen.diskFull !== undefined) {
    const said: EndingWords = { code: seen.diskFull.code ?? "E_IO_WRITE", message: seen.diskFull.message };
    return { reason, kind: "disk", said };
  }
  if (seen.engine !== undefined) return engineAccount(seen.engine, seen.signalled);
  const said = saidOf(seen);
  if (said === null && seen.oom !== undefined && oomKilled(exit, seen.oom.kills))
    return { reason, kind: "oom", said: oomWords(seen.oom.memoryBytes) };
  return { reason, kind: seen.watchKind ?? null, said };
}

/** A job its engine ended is recorded in the engine's words (specs/placement.md); `oom` its one kind kept. */
function engineAccount(engine: EngineAccount, signalled: string | undefined): Account {
  return {
    reason: engine.reason,
    kind: engine.kind === "oom" ? "oom" : null,
    said: {
      code: signalled === undefined ? engine.code : "E_SUPERVISOR_SIGNALLED",
      message: engine.words.words,
      engine: engine.words,
    },
  };
}

/** catherd's own words on an end it caused or met: a cap reached, a signal received, its own error. */
function saidOf(seen: Sighting): EndingWords | null {
  if (seen.budget !== undefined) return { code: "budget", message: seen.budget };
  if (seen.signalled !== undefined)
    return { code: "E_SUPERVISOR_SIGNALLED", message: `the supervisor received ${seen.signalled}` };
  return seen.said ?? null;
}

/**
 * An agent that ended by itself by SIGKILL (or, adopted, by a signal nobody can know) while its cgroup
 * counted an OOM kill was killed by the kernel for memory, not by a mystery SIGKILL.
 */
function oomKilled(exit: ExitFacts, kills: number): boolean {
  if (exit.reason !== "exited" || kills === 0) return false;
  return exit.signal === "SIGKILL" || (exit.code === null && exit.signal === null);
}

function oomWords(memoryBytes: number | null): EndingWords {
  const limit = memoryBytes === null ? "" : ` of ${formatSize(memoryBytes)}`;
  return {
    code: "E_AGENT_OOM",
    message: `the agent was killed by the OOM killer: its dispatch reached its memory limit${limit}`,
  };
}

/** The kind by the precedence, from exit.json's account and the stream; null: `ok`. */
function kindOf(exit: ExitFacts, summary: StreamSummary, rules: JudgeRules): ErrorKind | null {
  // catherd could not build the record: nothing of the folder is trusted, the agent's end included.
  if (exit.unbuilt !== undefined) return "record";
  // The OOM killer ended the agent at its dispatch's memory limit (its cgroup counted the kill, or its
  // engine ended the job for its memory): whatever the stream last said, that is why it ended.
  if (exit.kind === "oom") return "oom";
  // The disk could no longer keep the dispatch's files (the supervisor stopped the agent for it, or could
  // not write exit.json): the stream may lack its last lines, and its verdict counts for nothing.
  if (exit.kind === "disk") return "disk";
  const fixed = KIND_OF_REASON[exit.reason];
  if (fixed !== undefined) return fixed;
  // The kind of the retry the CLI was last seen waiting on: the supervisor's account, else the stream's.
  const pending = summary.retryPending ? (summary.lastRetry?.kind ?? null) : null;
  const retryKind = exit.kind === undefined ? pending : exit.kind;
  if (exit.reason === "idle-timeout") return retryKind ?? "timeout";
  // Without the supervisor's account: the retry streak it counted, else the refusal it saw, else down.
  if (exit.reason === "provider-unavailable")
    return exit.kind ?? summary.lastRetry?.kind ?? summary.lastKnownError?.kind ?? "provider-down";
  // exited or after-final: the CLI's own account; a success holds only with an answer that holds.
  if (succeeded(exit, summary, rules)) return exit.answer?.kind ?? exit.check?.kind ?? null;
  return (
    summary.finalError?.kind ??
    summary.lastKnownError?.kind ??
    retryKind ??
    (exit.code === null ? null : (rules.kindOfExitCode?.(exit.code) ?? null)) ??
    "cli"
  );
}

/**
 * The CLI's success: a successful terminal event (its error flag wins over its subtype); without one, an
 * `after-final`, or an exit 0 (not for a CLI that needs its terminal event).
 */
function succeeded(exit: ExitFacts, summary: StreamSummary, rules: JudgeRules): boolean {
  if (summary.final !== null) return !summary.final.isError;
  if (exit.reason === "after-final") return true;
  return !rules.needsFinal && exit.code === 0 && exit.signal === null;
}

/**
 * record.json's error for a kind: the code (exit.json's error code, else the exit reason), the most
 * specific words (catherd's own win: exit.json's message), and when to come back.
 */
function failed(kind: ErrorKind, exit: ExitFacts, summary: StreamSummary): EndingError {
  if (kind === "record") return unbuiltError(exit);
  if (kind === "answer-invalid" || kind === "answer-over-limit")
    return { code: exit.reason, kind, message: exit.answer?.message ?? "", retryAfter: null };
  // The check's words (a red check, one that could not judge, one a cancel stopped) are its own.
  if (exit.check != null && exit.check.kind === kind)
    return { code: exit.reason, kind, message: exit.check.message, retryAfter: null };
  const retryAfter = COME_BACK_LATER.has(kind) ? comeBackAt(kind, exit, summary) : null;
  const engine = exit.error?.engine;
  return {
    code: exit.error?.code ?? exit.reason,
    kind,
    message: cleanMessage(exit.error?.message ?? streamWords(kind, exit, summary)),
    retryAfter,
    ...(engine === undefined ? {} : { engine }),
  };
}

/**
 * When to come back: for a spent quota, when its spent windows have all reset (the CLI's structured
 * report, quota.ts) when it named them; else the time the provider's or the CLI's words named.
 */
function comeBackAt(kind: ErrorKind, exit: ExitFacts, summary: StreamSummary): string | null {
  const windows = kind === "quota" ? spentUntil(summary.quota) : null;
  return windows ?? retryAfterTime(summary.retryAfter, exit.endedAtMs ?? null);
}

/** The stream's words for a kind, else the exit described; a CLI's own budget after what was used of the cap. */
function streamWords(kind: ErrorKind, exit: ExitFacts, summary: StreamSummary): string {
  const words = cleanMessage(messageFor(kind, summary) ?? describeExit(exit));
  return kind === "budget" && exit.capUsed != null ? `${exit.capUsed}: ${words}` : words;
}

/** The error of a record catherd could not build: E_INTERNAL, its words, and how the agent ended. */
function unbuiltError(exit: ExitFacts): EndingError {
  const code = exit.code === null ? "" : `, exit code ${exit.code}`;
  const signal = exit.signal === null ? "" : `, signal ${exit.signal}`;
  return {
    code: "E_INTERNAL",
    kind: "record",
    message: cleanMessage(
      `catherd could not build this dispatch's record: ${exit.unbuilt} (the agent ended: ${exit.reason}${code}${signal}; its files are kept in the folder)`,
    ),
    retryAfter: null,
  };
}

/** The record's status alone (specs/record.md). */
export function statusByPrecedence(exit: ExitFacts, summary: StreamSummary, rules?: JudgeRules): Status {
  return judgeEnding(exit, summary, rules).status;
}
