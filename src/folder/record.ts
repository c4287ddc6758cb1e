import * as fs from "node:fs";
import * as path from "node:path";
import type { Backend, Outcome } from "../backends/types.js";
import { declaredOutcome } from "../domain/ending/declared-outcome.js";
import type { EndingError, ExitFacts } from "../domain/ending/ending.js";
import { type SandboxAccount, sandboxWords } from "../domain/sandbox/sandbox.js";
import {
  type AdmitFile,
  type ExitFile,
  type RecordFile,
  SCHEMA_VERSION,
  type SpecFile,
} from "../domain/schemas.js";
import { crossing, formatUsd } from "../domain/spend/budget.js";
import { billedTokens } from "../domain/spend/usage.js";
import { recordTail } from "../domain/text/redact.js";
import type { Status } from "../domain/vocab.js";
import { removeCgroupOf } from "../infra/cgroup/cgroup-leftovers.js";
import type { Clock } from "../infra/clock.js";
import { okValue } from "../infra/json-file.js";
import { tailLines } from "../infra/tail.js";
import { accountEnvironment } from "./account.js";
import { backendOf } from "./backend.js";
import { nextStepOf } from "./chain.js";
import { dispatchChanges } from "./changes.js";
import { agentDispatchId, dispatchIdOf } from "./dispatch-id-of.js";
import { closeInbox } from "./inbox-send.js";
import { checkAnswer } from "./judge-answer.js";
import { type CheckJudged, judgeCheck } from "./judge-check.js";
import { FILES, fileIn } from "./layout.js";
import { markHandOver, removeLiveMarkerOf } from "./markers.js";
import { notifyIfEnded, warnBudgetsIfDue } from "./notify.js";
import { settlePrivateTemp } from "./private-temp.js";
import { readFolderJson } from "./read.js";
import { isDiskRefusal, unbuiltRecord } from "./record-fallback.js";
import { settleSpend, spendBeforeRecord } from "./run-ledger.js";
import { keptReadOnly, sandboxAccount } from "./sandbox-log.js";
import { billingOf, type PricedUsage, priceUsage } from "./spend.js";
import { readSteering, steeringCounts } from "./steering-view.js";
import { summarizeDispatch } from "./summarize.js";
import { atomicWriter, createFolderJson, type JsonWriter, writeReply } from "./write.js";

/** What the dispatch's own supervisor does around its record (a reader that records a dead one does neither). */
export interface RecordOptions {
  /** It writes its part of the run's ledger before the record. */
  ownPart?: boolean;
  /**
   * What it tells others before the record frees its slot, so that no promotion decides without it (its
   * account's windows: supervisor/account-report.ts). Never throws.
   */
  beforeRecord?: (record: RecordFile) => Promise<void>;
}

/**
 * Writes record.json (and reply.md) from the folder's exit.json, admit.json and event stream. Created
 * exclusively: returns the record written, or null when one already existed (someone recorded it first).
 * Throws when exit.json is missing or unreadable: a record always follows an exit; throws when the disk
 * refuses a write; any other error while building the record gives a record that says so (kind
 * `record`: src/folder/record-fallback.ts). Before the record, it
 * settles what the dispatch leaves behind: `changes.patch` (from admission's git tree to the tree now)
 * and the private temp folder (measured, then removed unless the spec keeps it). `ownPart`: the caller is
 * the dispatch's own supervisor, which writes its part of the run's ledger before the record. `clock` dates
 * the ledger's parts (and prices an exit.json whose end cannot be read).
 */
export async function writeRecord(
  dir: string,
  clock: Clock,
  writer: JsonWriter = atomicWriter,
  { ownPart = false, beforeRecord }: RecordOptions = {},
): Promise<RecordFile | null> {
  if (fs.existsSync(fileIn(dir, FILES.record))) return null;
  const exitRead = readFolderJson(dir, FILES.exit);
  if (exitRead.kind !== "ok") {
    throw exitRead.kind === "missing" ? new Error(`${dir}/exit.json is missing`) : exitRead.error;
  }
  const admit = okValue(readFolderJson(dir, FILES.admit));
  const spec = okValue(readFolderJson(dir, FILES.spec));
  const backend = backendOf({ admit, spec });
  // What was not delivered never will be — whoever ends the dispatch (a supervisor, or a cancel of one
  // still queued): failed before the record counts it.
  if (spec?.steer !== undefined)
    await closeInbox(dir, exitRead.value.reason === "cancelled", clock.wallNow());
  const dispatchId = dispatchIdOf({ dir, admit, spec });
  const folder = { exit: exitRead.value, admit, spec, backend, dispatchId };
  const record = await buildRecord(dir, folder, clock).catch((error: unknown) => {
    // A disk that refuses a write is left to a later reader, who may find room; any other error is
    // catherd's own, and the dispatch is recorded now with it (specs/record.md, "A record always comes").
    if (isDiskRefusal(error)) throw error;
    return unbuiltRecord(folder, error);
  });
  if (record.reply !== null) writeReply(dir, record.reply);
  const { schema: _schema, ...body } = record;
  // The dispatch's own supervisor puts the record's spend in the run's ledger before its slot is freed.
  if (ownPart) spendBeforeRecord(dir, record, clock.wallNow());
  await beforeRecord?.(record);
  const created = createFolderJson(dir, FILES.record, body, writer);
  // The supervisor removed its cgroup at its stop; one killed before that left it, and whoever records
  // the dispatch removes it (empty only: a process stuck in it keeps it, for `clean` to find later).
  if (spec !== null) removeCgroupOf(agentDispatchId({ dir, spec }), dir);
  // Before the live marker goes: a recorder killed in between leaves the marker to say it is still due.
  if (created) notifyIfEnded(dir, record);
  // A chain that goes on stays live (its name, its marker) until the hand-over is done.
  if (record.next == null) removeLiveMarkerOf(dir);
  else markHandOver(dir, record.name ?? "", record.backend);
  // The run's ledger takes the record's figures from the one writer that created it.
  if (created) await settleSpend(dir, record, clock.wallNow());
  // After the ledger: the record's spend is in its folder, where the budgets by period read it.
  if (created) warnBudgetsIfDue(dir);
  return created ? record : null;
}

/**
 * The status the turn's record would have before catherd's checks of it (the answer's, `--verify`'s): its
 * supervisor asks it to know whether the check is due. A folder without a readable exit.json: `failed`.
 */
export function turnStatus(dir: string): Status {
  const exit = okValue(readFolderJson(dir, FILES.exit));
  if (exit === null) return "failed";
  const admit = okValue(readFolderJson(dir, FILES.admit));
  const spec = okValue(readFolderJson(dir, FILES.spec));
  const backend = backendOf({ admit, spec });
  return backend.finalize(summarizeDispatch(dir, backend), exitFactsOf(exit, spec, backend)).status;
}

/** The folder's files a record is made from, and who the dispatch is. */
interface Folder {
  exit: ExitFile;
  admit: AdmitFile | null;
  spec: SpecFile | null;
  backend: Backend;
  dispatchId: string;
}

async function buildRecord(dir: string, folder: Folder, clock: Clock): Promise<RecordFile> {
  const { exit, admit, spec, backend } = folder;
  const summary = summarizeDispatch(dir, backend);
  const facts = exitFactsOf(exit, spec, backend);
  // The process's verdict first: it says whether there is an answer to check, and its usage is priced.
  const before = backend.finalize(summary, facts);
  const spend = await priceUsage(
    before.usage.models,
    billingOf(backend, spec === null ? null : { ...spec, env: { ...spec.env, ...accountEnvironment(dir) } }),
    facts.endedAtMs == null ? clock.wallNow() : new Date(facts.endedAtMs),
  );
  const thread = exit.thread ?? summary.thread;
  const checked = await checkAnswer(dir, { spec, admit }, summary, {
    status: before.status,
    reply: before.reply,
    backend: backend.id,
    thread,
  });
  const judged = judgeCheck(dir, { spec, admit }, { status: before.status, backend: backend.id, thread });
  // Then the same verdict with what only the record learns: what was used of --max-cost, the answer's
  // check, the check's (an answer that does not fit is repaired first: the check runs again on the repair).
  const outcome = backend.finalize(summary, {
    ...facts,
    capUsed: budgetWords(spec, spend),
    answer: checked.problem,
    check: judged.problem,
  });
  const recorded = await recordBody(dir, folder, { outcome, spend, thread });
  return withChain(admit, {
    ...recorded,
    ...(checked.fields === null ? {} : checked.fields),
    ...(judged.field === null ? {} : { verify: judged.field, error: withCheckTail(recorded.error, judged) }),
  });
}

/** A check's failure carries the tail of the check's output, not of the agent's stderr. */
function withCheckTail(error: RecordFile["error"], judged: CheckJudged): RecordFile["error"] {
  if (error === null || judged.problem?.kind !== error.kind) return error;
  return { ...error, tail: judged.field?.runs.at(-1)?.tail ?? [] };
}

/** exit.json as the verdict weighs it (src/domain/ending/ending.ts), with the limits the dispatch ran under. */
function exitFactsOf(exit: ExitFile, spec: SpecFile | null, backend: Backend): ExitFacts {
  const endedAtMs = Date.parse(exit.endedAt);
  return {
    reason: exit.reason,
    code: exit.code,
    signal: exit.signal,
    // The supervisor's account, when its exit.json has one; a reader's or an older one leaves it to the stream.
    ...(exit.kind === undefined ? {} : { kind: exit.kind }),
    error: exit.error,
    endedAtMs: Number.isFinite(endedAtMs) ? endedAtMs : null,
    limits: {
      idleMs: spec?.idleMs ?? backend.defaults.idleMs,
      wallMs: spec?.wallMs ?? backend.defaults.wallMs,
    },
  };
}

/** The record's fields from the verdict, the priced usage and the folder's other files. */
async function recordBody(
  dir: string,
  folder: Folder,
  judged: { outcome: Outcome; spend: PricedUsage; thread: string | null },
): Promise<RecordFile> {
  const { exit, admit, spec } = folder;
  const { outcome, spend } = judged;
  const activity = okValue(readFolderJson(dir, FILES.activity));
  const reply = outcome.reply;
  const { changedFiles, patch, worktree, commits } = await dispatchChanges(dir, admit, spec);
  const sandbox = spec?.sandbox === undefined ? null : sandboxAccount(dir, spec.sandbox.mode);
  return {
    schema: SCHEMA_VERSION,
    dispatchId: folder.dispatchId,
    run: admit?.run ?? null,
    name: admit?.name ?? null,
    backend: folder.backend.id,
    model: admit?.model ?? null,
    account: okValue(readFolderJson(dir, FILES.account))?.name ?? null,
    ...(admit?.tags === undefined || admit.tags.length === 0 ? {} : { tags: admit.tags }),
    status: outcome.status,
    reason: exit.reason,
    exitCode: exit.code,
    signal: exit.signal,
    startedAt: exit.startedAt,
    endedAt: exit.endedAt,
    secs: exit.durationMs === null ? null : Math.round(exit.durationMs / 100) / 10,
    thread: judged.thread,
    tokens: spend.tokens,
    costUsd: spend.costUsd,
    usage: spend.usage,
    costSource: spend.costSource,
    pricedBy: spend.pricedBy,
    reply,
    replyPath: reply === null ? null : path.join(dir, FILES.reply),
    changedFiles,
    error: recordError(dir, outcome.failure, sandbox),
    patch,
    worktree,
    commits,
    tmp: settlePrivateTemp(dir, spec?.keepTmp ?? false),
    admittedAt: admit?.admittedAt ?? null,
    maxTokens: spec?.maxTokens ?? null,
    maxCostUsd: spec?.maxCostUsd ?? null,
    lastEvent: activity?.lastEvent ?? null,
    lastEventAt: activity?.lastEventAt ?? exit.lastEventAt ?? null,
    slotWaitMs: exit.slotWaitMs ?? null,
    capCrossed:
      exit.reason === "budget" || outcome.failure?.kind === "budget" ? null : capCrossed(spec, spend),
    // The worker's word, read only when asked for (absent when not): beside `status`, never changing it.
    ...(spec?.outcome === true ? { outcome: declaredOutcome(reply) } : {}),
    ...(spec?.steer === undefined ? {} : { steering: steeringOf(dir, exit) }),
    ...(sandbox === null ? {} : { sandbox }),
  };
}

/** A steerable dispatch's messages and questions by their last state, once the agent has exited. */
function steeringOf(dir: string, exit: ExitFile): NonNullable<RecordFile["steering"]> {
  // Recorded once the agent has exited: no question waits any more.
  return { ...steeringCounts(readSteering(dir, "exited")), keptOpenMs: exit.keptOpenMs ?? null };
}

/** Where the dispatch stands in its chain, for a folder whose admit.json names an attempt. */
function withChain(admit: AdmitFile | null, ended: RecordFile): RecordFile {
  if (admit?.attempt === undefined && admit?.ladder === undefined) return ended;
  const next = nextStepOf(admit, ended);
  return {
    ...ended,
    attempt: admit.attempt ?? 1,
    failoverFrom: admit.failoverFrom ?? null,
    next:
      next === null
        ? null
        : { backend: next.backend, model: next.model, notBefore: next.notBefore, why: next.why },
  };
}

/**
 * record.error for anything but `ok` (specs/record.md): the verdict's error (src/domain/ending/ending.ts) with
 * what the sandbox refused in its words, and the tail of stderr.log; an answer that does not hold is the
 * worker's, and carries neither.
 */
function recordError(
  dir: string,
  failure: EndingError | null,
  sandbox: SandboxAccount | null,
): RecordFile["error"] {
  if (failure === null) return null;
  const { code, kind, message, retryAfter, engine } = failure;
  if (kind === "answer-invalid" || kind === "answer-over-limit")
    return { code, kind, message, retryAfter, tail: [] };
  const tail = recordTail(tailLines(fileIn(dir, FILES.stderr), TAIL_SCAN_LINES, TAIL_SCAN_BYTES));
  return {
    code,
    kind,
    message: withSandboxWords(message, sandbox, dir),
    retryAfter,
    tail,
    // What the engine said of a job it ended (specs/placement.md): carried from exit.json as it is.
    ...(engine === undefined ? {} : { engine }),
  };
}

/** A failure's words with what the sandbox refused after them, and the flag that would allow it. */
function withSandboxWords(message: string, sandbox: SandboxAccount | null, dir: string): string {
  const words = sandbox === null ? null : sandboxWords(sandbox, keptReadOnly(dir));
  return words === null ? message : `${message} (${words})`;
}

/** "used $0.0069 of --max-cost 0.001": the spend against the dispatch's dollar cap, or null without one. */
function budgetWords(spec: SpecFile | null, spend: PricedUsage): string | null {
  const cap = spec?.maxCostUsd ?? null;
  if (cap === null || spend.costUsd === null) return null;
  return `used ${formatUsd(spend.costUsd)} of --max-cost ${cap}`;
}

/**
 * The dispatch's own cap its final usage reached, for a dispatch no cap stopped: a CLI that reports usage
 * only with its answer (codex, gemini) crosses its cap when the work is already done. Null: none reached.
 */
function capCrossed(spec: SpecFile | null, spend: PricedUsage): RecordFile["capCrossed"] {
  const caps = { maxTokens: spec?.maxTokens ?? null, maxCostUsd: spec?.maxCostUsd ?? null };
  if (caps.maxTokens === null && caps.maxCostUsd === null) return null;
  const reached = crossing(caps, {
    tokens: billedTokens(spend.usage),
    costUsd: spend.costUsd,
    priced: spend.costSource === "priced",
  });
  if (reached === null || (reached.cap !== "tokens" && reached.cap !== "cost")) return null;
  return { cap: reached.cap, limit: reached.limit, used: reached.used, message: reached.message };
}

/** How much of stderr.log is read for its tail: enough lines to find 20 non-empty ones. */
const TAIL_SCAN_LINES = 200;
const TAIL_SCAN_BYTES = 64 * 1024;
