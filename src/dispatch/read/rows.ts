// status's rows (specs/cli.md, `status`): one dispatch as a row, from its record alone once it has one,
// from its view and activity.json while it lives; a chain's attempts folded into one row. Reading only.

import type { DeclaredOutcome } from "../../domain/ending/declared-outcome.js";
import type { SandboxedMode } from "../../domain/sandbox/sandbox.js";
import type { ActivityFile, PlacementFile, QueuedFile, RecordFile, SpecFile } from "../../domain/schemas.js";
import { billedTokens } from "../../domain/spend/usage.js";
import type { MessageState } from "../../domain/steering/inbox.js";
import type { BackendId, DispatchState } from "../../domain/vocab.js";
import { backendIdOf } from "../../folder/backend.js";
import { FILES, placeOf } from "../../folder/layout.js";
import { isSeen } from "../../folder/markers.js";
import { readFolderJson } from "../../folder/read.js";
import { refusalsIn } from "../../folder/sandbox-log.js";
import { readSteering } from "../../folder/steering-view.js";
import { okValue } from "../../infra/json-file.js";
import type { RunPaths } from "../../infra/paths.js";
import type { DispatchView } from "./inspect.js";
import { type LockActivity, lockActivityOf } from "./lock-activity.js";

/** The part of record.error that `status` shows. */
export interface RowError {
  kind: string | null;
  message: string;
  retryAfter: string | null;
}

function rowError(record: RecordFile | null): RowError | null {
  const error = record?.error;
  if (error === null || error === undefined || record?.status === "ok") return null;
  return { kind: error.kind ?? null, message: error.message, retryAfter: error.retryAfter ?? null };
}

/** One dispatch as `status` shows it. */
export interface DispatchRow {
  run: string;
  name: string | null;
  dispatchId: string;
  dir: string;
  backend: BackendId | null;
  state: DispatchState;
  /**
   * When it was admitted: admit.json for a live one, record.json for a recorded one (which costs one file
   * read); null for a folder without admit.json and for a record written before records carried it.
   */
  admittedAt: string | null;
  /** When its supervisor started (supervisor.json, exit.json or the record); null while starting. */
  startedAt: string | null;
  endedAt: string | null;
  status: RecordFile["status"] | null;
  reason: string | null;
  /** Why a recorded dispatch did not end ok: its kind, message and when to come back (record.json). */
  error: RowError | null;
  lastEvent: string | null;
  lastEventAt: string | null;
  openToolCalls: ActivityFile["openToolCalls"];
  tokens: { input: number; cached: number; output: number } | null;
  /** What it spent (so far, while it lives) against its caps; null before the CLI reported any usage. */
  spend: RowSpend | null;
  /** Recorded, and its result not yet read with `result` or `wait`. */
  unread: boolean;
  /** For a queued dispatch: its place (1 = next; null once its promoter died, it is promoted next) and why. */
  queue: QueueInfo | null;
  /** Files of the folder that could not be read (torn, newer, unreadable): each with its error. */
  problems: { code: string; message: string; file: string | null }[];
  /** Why an `unknown` (or unrecorded `exited`) dispatch cannot be judged from here, though its files read. */
  undecided: string | null;
  /** Its attempt in its chain (specs/dispatch.md, "The failover ladder"); 1 for a dispatch as given. */
  attempt: number;
  /** The attempts of its chain before it, first to last: one row stands for the whole chain. */
  earlier: EarlierAttempt[];
  /** For a recorded attempt whose chain goes on: the attempt it hands over to (record.json `next`). */
  next: { backend: BackendId; model: string | null; notBefore: string | null } | null;
  /** A `catherd lock` of its agent waiting for a heavy slot or running in one (live dispatches only). */
  heavy: LockActivity | null;
  /**
   * The worker's declared outcome as record.json has it (`--outcome`): null when asked for and the final
   * message had none; absent when not asked for, and while it lives.
   */
  outcome?: DeclaredOutcome | null;
  /** A steerable dispatch's talk (RowConversation): null for one not started steerable. */
  questions?: RowConversation["questions"];
  messages?: RowConversation["messages"];
  asking?: RowConversation["asking"];
  /** A sandboxed dispatch's sandbox (specs/sandbox.md; the row's field keeps the name `fence`): its mode and what it refused so far; absent: none. */
  fence?: RowSandbox;
  /** Its check (`--verify`): the command, whether it passed, the chain's runs so far, since when it runs; absent: none. */
  check?: RowCheck;
}

/** A dispatch's check as its row says it. */
export interface RowCheck {
  command: string;
  /** The record's `verify.passed`; null while it runs, or when it did not run to a verdict. */
  passed: boolean | null;
  /** Runs of the chain so far (the record's); 0 while the first runs. */
  runs: number;
  /** When the run under way started (verify.json), while the dispatch is `verifying`; else null. */
  since: string | null;
}

/** A recorded dispatch's check, from its record alone. */
function recordedCheck(record: RecordFile): { check?: RowCheck } {
  const check = record.verify;
  if (check === undefined) return {};
  return { check: { command: check.command, passed: check.passed, runs: check.runs.length, since: null } };
}

/** A dispatch's check: the record's once recorded; while it lives, spec.json's and verify.json's run. */
function checkOf(view: DispatchView): { check?: RowCheck } {
  if (view.record !== null) return recordedCheck(view.record);
  const command = view.spec?.verify?.command;
  if (command === undefined) return {};
  const run = view.state === "verifying" ? okValue(readFolderJson(view.dir, FILES.check)) : null;
  const since = run?.state === "running" && run.pid !== null ? run.startedAt : null;
  return { check: { command, passed: null, runs: 0, since } };
}

/** A sandboxed dispatch's sandbox as its row says it: the record's account, or sandbox.log's while it lives. */
export interface RowSandbox {
  mode: SandboxedMode;
  denied: number;
  firstDenied: string | null;
}

function recordedSandbox(record: RecordFile): { fence?: RowSandbox } {
  const s = record.sandbox;
  return s === undefined ? {} : { fence: { mode: s.mode, denied: s.denied, firstDenied: s.firstDenied } };
}

function liveSandbox(view: DispatchView): { fence?: RowSandbox } {
  if (view.record !== null) return recordedSandbox(view.record);
  const mode = view.spec?.sandbox?.mode;
  return mode === undefined ? {} : { fence: { mode, ...refusalsIn(view.dir) } };
}

/**
 * A steerable dispatch's talk as its row says it (specs/steering.md): null fields for a dispatch not
 * started steerable. Recorded, from the record's `steering`; live, read from inbox/ and questions/ —
 * only for a spec that says it is steerable.
 */
export interface RowConversation {
  /** Questions nobody has answered yet: while there is one, the dispatch waits for an answer. */
  questions: number | null;
  /** Its messages by state. */
  messages: Record<MessageState, number> | null;
  /** The first question waiting for an answer (live dispatches only). */
  asking: { id: string; kind: string; asks: string; answerBy: string } | null;
}

const NOT_STEERABLE: RowConversation = { questions: null, messages: null, asking: null };

/** A recorded dispatch's talk, as its record counted it (final: nothing is asked or sent to it any more). */
function recordedConversation(record: RecordFile): RowConversation {
  const steering = record.steering;
  if (steering === undefined) return NOT_STEERABLE;
  const m = steering.messages;
  return {
    questions: steering.questions.unanswered,
    messages: { queued: m.queued, delivered: m.delivered, acted: m.acted, failed: m.failed },
    asking: null,
  };
}

/** A live dispatch's talk: inbox/ and questions/ read, where its spec says it is steerable. */
function liveConversation(view: DispatchView): RowConversation {
  if (view.record !== null) return recordedConversation(view.record);
  if (view.spec?.steer === undefined) return NOT_STEERABLE;
  const talk = readSteering(view.dir, view.state);
  const messages: Record<MessageState, number> = { queued: 0, delivered: 0, acted: 0, failed: 0 };
  for (const m of talk.messages) messages[m.state] += 1;
  const first = talk.waiting[0];
  return {
    questions: talk.waiting.length,
    messages,
    asking:
      first === undefined
        ? null
        : { id: first.id, kind: first.kind, asks: first.asks, answerBy: first.answerBy },
  };
}

/**
 * A dispatch's spend as `status`, `wait` and the MCP tools show it: tokens billed (as --max-tokens counts
 * them), its dollars with their source (null: no figure), and its caps (null: none).
 */
export interface RowSpend {
  tokens: number;
  costUsd: number | null;
  costSource: RecordFile["costSource"] | null;
  maxTokens: number | null;
  maxCostUsd: number | null;
}

/** The spend of a record, or of activity.json so far with the spec's caps; null when neither has usage. */
export function spendOf(
  figures: Pick<ActivityFile, "tokens" | "usage" | "costUsd" | "costSource"> | null,
  caps: Pick<SpecFile, "maxTokens" | "maxCostUsd"> | null,
): RowSpend | null {
  if (figures === null) return null;
  const tokens =
    figures.usage === undefined ? figures.tokens.input + figures.tokens.output : billedTokens(figures.usage);
  const maxTokens = caps?.maxTokens ?? null;
  const maxCostUsd = caps?.maxCostUsd ?? null;
  if (tokens === 0 && figures.costUsd == null && maxTokens === null && maxCostUsd === null) return null;
  return {
    tokens,
    costUsd: figures.costUsd ?? null,
    costSource: figures.costSource ?? null,
    maxTokens,
    maxCostUsd,
  };
}

/** An attempt of a chain before the row's own: how it ended. */
export interface EarlierAttempt {
  dispatchId: string;
  attempt: number;
  backend: BackendId | null;
  status: RecordFile["status"] | null;
  kind: string | null;
}

/**
 * A queued dispatch's place in the run's queue and what holds it back (queued.json) — or, for one whose
 * job waits in its engine's queue, `blockedBy: "engine"` and the engine's reason (specs/placement.md).
 */
export interface QueueInfo {
  position: number | null;
  since: string;
  blockedBy: QueuedFile["blockedBy"] | "engine";
  blocker: QueuedFile["blocker"];
  notBefore: string | null;
  /** For a job pending in its engine: the engine, the job, and its reason (Licenses, Resources, Priority, …). */
  engine?: { name: PlacementFile["engine"]; jobId: string; reason: string };
}

/** The queue facts of a dispatch found queued; null for any other state. */
export function queueInfo(view: DispatchView, positions: Map<string, number>): QueueInfo | null {
  if (view.state !== "queued") return null;
  if (view.placement !== null && view.job?.kind === "known") {
    const { engine, jobId, submittedAt } = view.placement;
    return {
      position: null,
      since: submittedAt,
      blockedBy: "engine",
      blocker: null,
      notBefore: null,
      engine: { name: engine, jobId, reason: view.job.reason ?? "waiting for the scheduler" },
    };
  }
  if (view.queued === null) return null;
  const { since, blockedBy, blocker, notBefore } = view.queued;
  return { position: positions.get(view.dispatchId) ?? null, since, blockedBy, blocker, notBefore };
}

/**
 * One row per chain: an attempt that a later attempt in the rows followed is folded into that row's
 * `earlier`, oldest first. `from` says which attempt each row followed.
 */
export function foldChains(rows: DispatchRow[], from: Map<string, string>): DispatchRow[] {
  if (from.size === 0) return rows;
  const byId = new Map(rows.map((r) => [r.dispatchId, r]));
  const folded = new Set<string>();
  // Lowest attempt first, so that an attempt's own earlier ones are in place before it is folded on (ids
  // do not order a chain: two attempts admitted in one second sort by their random suffix).
  for (const row of [...rows].sort((a, b) => a.attempt - b.attempt)) {
    const before = byId.get(from.get(row.dispatchId) ?? "");
    if (before === undefined) continue;
    row.earlier = [
      ...before.earlier,
      {
        dispatchId: before.dispatchId,
        attempt: before.attempt,
        backend: before.backend,
        status: before.status,
        kind: before.error?.kind ?? null,
      },
    ];
    folded.add(before.dispatchId);
  }
  return rows.filter((r) => !folded.has(r.dispatchId));
}

export function recordedRow(run: RunPaths, dir: string, record: RecordFile): DispatchRow {
  return {
    run: run.run,
    name: record.name,
    dispatchId: record.dispatchId,
    dir,
    backend: record.backend,
    state: "recorded",
    admittedAt: record.admittedAt ?? null,
    startedAt: record.startedAt,
    endedAt: record.endedAt,
    status: record.status,
    reason: record.reason,
    error: rowError(record),
    lastEvent: record.lastEvent ?? null,
    lastEventAt: record.lastEventAt ?? null,
    openToolCalls: [],
    tokens: record.tokens,
    spend: spendOf(record, record),
    unread: !isSeen(dir),
    queue: null,
    problems: [],
    undecided: null,
    attempt: record.attempt ?? 1,
    earlier: [],
    next: nextOf(record),
    heavy: null,
    ...(record.outcome === undefined ? {} : { outcome: record.outcome }),
    ...recordedConversation(record),
    ...recordedSandbox(record),
    ...recordedCheck(record),
  };
}

function nextOf(record: RecordFile | null): DispatchRow["next"] {
  const next = record?.next;
  return next == null ? null : { backend: next.backend, model: next.model, notBefore: next.notBefore };
}

/** The row of a dispatch without a record; `positions` (queuePositions) places a queued one in its queue. */
export function liveRow(
  run: RunPaths,
  view: DispatchView,
  positions: Map<string, number> = new Map(),
): DispatchRow {
  const activity = readFolderJson(view.dir, FILES.activity);
  const now = activity.kind === "ok" ? activity.value : null;
  return {
    run: run.run,
    // A folder whose admit.json cannot be read is still named by where it lies.
    name: view.admit?.name ?? placeOf(view.dir)?.name ?? null,
    dispatchId: view.dispatchId,
    dir: view.dir,
    backend: backendIdOf(view),
    state: view.state,
    admittedAt: view.admit?.admittedAt ?? null,
    startedAt: view.record?.startedAt ?? view.exit?.startedAt ?? view.supervisor?.startedAt ?? null,
    endedAt: view.record?.endedAt ?? view.exit?.endedAt ?? null,
    status: view.record?.status ?? null,
    reason: view.record?.reason ?? view.exit?.reason ?? null,
    error: rowError(view.record),
    lastEvent: now?.lastEvent ?? null,
    lastEventAt: now?.lastEventAt ?? null,
    openToolCalls: now?.openToolCalls ?? [],
    tokens: view.record?.tokens ?? now?.tokens ?? null,
    spend: spendOf(view.record ?? now, view.record ?? view.spec),
    unread: view.state === "recorded" && !isSeen(view.dir),
    queue: queueInfo(view, positions),
    problems: view.problems.map((p) => ({ code: p.code, message: p.message, file: p.file ?? null })),
    undecided: view.undecided,
    attempt: view.admit?.attempt ?? 1,
    earlier: [],
    next: nextOf(view.record),
    heavy: AGENT_STATES.has(view.state) ? lockActivityOf(view.dir) : null,
    ...(view.record?.outcome === undefined ? {} : { outcome: view.record.outcome }),
    ...liveConversation(view),
    ...liveSandbox(view),
    ...checkOf(view),
  };
}

/** The states in which the agent may be running, and with it a `catherd lock`. */
const AGENT_STATES: ReadonlySet<DispatchState> = new Set(["running", "stopping", "orphaned"]);
