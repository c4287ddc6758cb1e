import * as fs from "node:fs";
import * as path from "node:path";
import type { Backend } from "../src/backends/types.js";
import type { Crossing } from "../src/domain/budget.js";
import type { DiskFull } from "../src/domain/disk.js";
import { type LineFacts, PROGRESS } from "../src/domain/facts.js";
import type { Spec } from "../src/domain/schemas.js";
import { NO_SLOTS, observeSlots } from "../src/domain/slot-time.js";
import type { ErrorKind, ExitReason } from "../src/domain/vocab.js";
import {
  decide,
  initialWatch,
  nextDeadline,
  observe,
  type WatchLimits,
  type WatchState,
} from "../src/domain/watch.js";
import { FILES, fileIn } from "../src/folder/layout.js";
import { isLockReportName } from "../src/folder/lock-reports.js";
import type { FolderJsonFile } from "../src/folder/read.js";
import { type FolderJsonBody, writeFolderJson } from "../src/folder/write.js";
import { makeDir } from "../src/infra/atomic.js";
import { type FolderWatch, watchFolder } from "../src/infra/folder-watch.js";
import { LineReader, type ReadResult } from "../src/infra/line-reader.js";
import { ActivityWriter } from "./activity.js";
import type { RunningChild } from "./child.js";
import type { SupervisorDeps } from "./deps.js";
import { DiskWatch } from "./disk-watch.js";
import { EventTimes } from "./event-times.js";
import type { SupervisorLog } from "./log.js";
import type { Resume } from "./resume.js";
import { RunBudgetWatch } from "./run-budget-watch.js";
import { SlotReports } from "./slot-reports.js";
import { SpendWatch } from "./spend-watch.js";
import type { Steering } from "./steering.js";
import { UsageLogReader } from "./usage-log.js";

/**
 * Lines are read and judged in bites of this much input: small enough that a bite's lines die young, so
 * that the heap does not grow with the stream (figures: specs/performance.md, "Figures behind constants").
 */
export const POLL_BUDGET_BYTES = 1024 * 1024;

/**
 * While nothing moves, the loop still looks this often, for the changes inotify cannot see: another
 * machine's writes to a shared file system (a cancel written from there). Deadlines do not wait for it:
 * the loop wakes at each one.
 */
export const QUIET_POLL_MS = 30_000;
/** A capped dispatch whose CLI keeps a usage log looks at it at least this often (it is not watched). */
const USAGE_LOG_POLL_MS = 1000;
/** A floor under every sleep, so that no slip in the deadline arithmetic can make the loop spin. */
const MIN_SLEEP_MS = 5;
/**
 * The files whose change is news: the agent's output, a cancel request, a lock's report (slot-reports.ts);
 * for a steerable dispatch the inbox and the questions (watched folders of their own).
 */
const WATCHED: readonly string[] = [FILES.events, FILES.stderr, FILES.cancel];
const isWatched = (name: string) => WATCHED.includes(name) || isLockReportName(name);

export interface WatchInput {
  dir: string;
  spec: Spec;
  backend: Backend;
  child: RunningChild;
  deps: SupervisorDeps;
  log: SupervisorLog;
  /** Aborted when the supervisor itself is asked to stop (SIGTERM, SIGINT, SIGHUP). */
  interrupt: AbortSignal;
  /** An adopted dispatch: the state is rebuilt from the whole of both files, dated as `resume` says. */
  resume?: Resume | undefined;
  /** A steerable dispatch's conversation (steering.ts); absent: not steerable. */
  steering?: Steering | undefined;
}

export interface WatchOutcome {
  reason: ExitReason;
  /** The kind the provider's words gave the stop (decide's verdict), or null. */
  errorKind: ErrorKind | null;
  state: WatchState;
  /** For a `budget` stop: the cap reached and what was used of it. */
  budget: Crossing | null;
  /** For a stop on a full disk (reason supervisor-error, kind disk): the file system and its refusal. */
  disk: DiskFull | null;
}

/** The watch of a steerable dispatch's inbox/ and questions/: a message or an answer is news. */
function watchConversation(dir: string, onChange: () => void): FolderWatch[] {
  const watches: FolderWatch[] = [];
  for (const sub of [FILES.inbox, FILES.questions]) {
    const folder = path.join(dir, sub);
    makeDir(folder);
    const watch = watchFolder(folder, () => true, onChange);
    if (watch !== null) watches.push(watch);
  }
  return watches;
}

export function limitsOf(spec: Spec): WatchLimits {
  return {
    idleMs: spec.idleMs,
    wallMs: spec.wallMs,
    stallMs: spec.stallMs,
    graceAfterFinalMs: spec.graceAfterFinalMs,
    retryAttempts: spec.providerRetry.attempts,
    retryWindowMs: spec.providerRetry.windowMs,
  };
}

/**
 * The thin loop of specs/supervisor.md ("The loop"): read new lines, let the backend parse them, let the pure `decide` judge,
 * and do what it says. While output flows it reads every pollMs. When a poll finds nothing new it sleeps
 * until something happens — a watched file changes (inotify), the next deadline of `nextDeadline` comes,
 * activity.json is due, the agent exits, the supervisor is interrupted — or QUIET_POLL_MS passes: a quiet
 * agent costs a wake-up per QUIET_POLL_MS (and the lock's refreshes), not one per pollMs.
 */
export async function watchAgent(input: WatchInput): Promise<WatchOutcome> {
  const { dir, spec, backend, child, deps, log } = input;
  const { clock, files } = deps;
  const limits = limitsOf(spec);
  const events = new LineReader(fileIn(dir, FILES.events));
  const stderr = new LineReader(fileIn(dir, FILES.stderr));
  const cancelPath = fileIn(dir, FILES.cancel);
  const parseStderr = backend.parseStderr ?? (() => PROGRESS);
  const resume = input.resume;
  let state = initialWatch(resume?.startedAt ?? clock.now());
  if (resume?.stalled === true) state = { ...state, stalled: true };
  if (resume !== undefined) state = { ...state, slotWaitedMs: resume.slotWaitedMs };
  let threadWritten: string | null = resume?.thread ?? null;
  /** The first poll of an adopted dispatch reads everything the agent wrote unwatched, dated linesAt. */
  let backlogAt: number | null = resume?.linesAt ?? null;
  const spend = new SpendWatch(backend, spec, spec, log);
  const runBudget = RunBudgetWatch.of(dir, log);
  const disk = new DiskWatch(dir, log);
  const activity = new ActivityWriter(
    dir,
    files,
    (accounts, at) => spend.priced(accounts, at),
    (error) => disk.refused(error, FILES.activity),
  );
  const eventTimes = new EventTimes(fileIn(dir, FILES.eventTimes));
  const slots = new SlotReports(dir);
  const wallAtStart = resume?.startedAtWall ?? clock.wallNow().getTime();
  const usageLog =
    backend.usageLog === undefined
      ? null
      : new UsageLogReader(dir, backend.usageLog, { ...process.env, ...spec.env }, wallAtStart);
  /** The cap reached (it stays reached), and how many usage reports the last look at the spend saw. */
  let budget: Crossing | null = null;
  let spendSeen = 0;
  const toWall = (mono: number) => new Date(wallAtStart + (mono - state.startedAt)).toISOString();

  /** thread.json and stall.json inform readers; failing to write one is logged, never fatal. */
  const writeNotice = <F extends FolderJsonFile>(file: F, body: FolderJsonBody<F>) => {
    try {
      writeFolderJson(dir, file, body, files);
    } catch (error) {
      log("write-failed", { file, message: error instanceof Error ? error.message : String(error) });
      disk.refused(error, file);
    }
  };

  // One signal and one listener for the whole dispatch: a new listener per poll would grow for hours.
  const wake = AbortSignal.any([input.interrupt, child.exitSignal]);
  /** The current sleep, to cut short; and whether news of a watched file may cut it. */
  let sleeping: AbortController | null = null;
  let wakeOnChange = false;
  const onWake = () => sleeping?.abort();
  wake.addEventListener("abort", onWake);
  /** A watched file may have changed since the last poll started (always so without a watch). */
  let sawChange = true;
  const folder = watchFolder(dir, isWatched, (name) => {
    if (name === "" || isLockReportName(name)) slots.changed();
    sawChange = true;
    if (wakeOnChange || name === FILES.cancel) sleeping?.abort();
  });
  const steering = input.steering;
  const conversation =
    steering === undefined
      ? []
      : watchConversation(dir, () => {
          sawChange = true;
          if (wakeOnChange) sleeping?.abort();
        });
  // A fenced agent's locks report in locks/ (src/folder/lock-reports.ts): watched as the folder is.
  const lockReports = fs.existsSync(path.join(dir, FILES.lockReports))
    ? watchFolder(path.join(dir, FILES.lockReports), isLockReportName, () => {
        slots.changed();
        sawChange = true;
        if (wakeOnChange) sleeping?.abort();
      })
    : null;

  const ingest = (
    file: string,
    reader: LineReader,
    parse: (line: string) => LineFacts,
    final: boolean,
    now: number,
  ) => {
    // Bounded bites: a burst of output never sits in memory whole.
    let bytes = 0;
    for (let more = true; more; ) {
      const read = reader.read(POLL_BUDGET_BYTES);
      bytes += read.bytes;
      more = read.bytes >= POLL_BUDGET_BYTES;
      handle(file, read, parse, now);
    }
    if (final) handle(file, reader.flush(), parse, now);
    return bytes;
  };
  const handle = (file: string, read: ReadResult, parse: (line: string) => LineFacts, now: number) => {
    if (read.dropped > 0) log("line-dropped", { file, count: read.dropped });
    if (read.restarted) log("file-restarted", { file });
    if (read.restarted && file === FILES.events) eventTimes.restart();
    for (const line of read.lines) {
      const parsed = safeParse(parse, line);
      const facts = steering === undefined ? parsed : steering.observe(parsed, now);
      state = observe(state, facts, now);
      const ignored = activity.note(facts);
      if (ignored !== null) spend.ignore(file, ignored);
      if (facts.retry !== undefined) log("retry", { attempt: facts.retry.attempt, max: facts.retry.max });
    }
  };
  /** The CLI's own usage log: its reports count as the stream's do, but are not progress. */
  const ingestUsageLog = (now: number) => {
    for (const facts of usageLog?.read(state.thread, now) ?? []) {
      const ignored = activity.note(facts);
      if (ignored !== null) spend.ignore(usageLog?.path ?? "usage log", ignored);
    }
  };

  try {
    for (;;) {
      // Look at the exit before reading: every line written before it is then read in this poll.
      const exited = child.exit !== null;
      const now = clock.now();
      const readAt = backlogAt ?? now;
      backlogAt = null;
      sawChange = folder === null || folder.broken;
      const eventBytes = ingest(FILES.events, events, (line) => backend.parse(line), exited, readAt);
      eventTimes.note(eventBytes, wallAtStart + (readAt - state.startedAt), now);
      const bytes = eventBytes + ingest(FILES.stderr, stderr, parseStderr, exited, readAt);
      ingestUsageLog(now);
      if (spend.capped && budget === null && activity.usageReports !== spendSeen) {
        spendSeen = activity.usageReports;
        budget = await spend.crossed(activity.accounts(), clock.wallNow());
      }
      if (runBudget !== null && budget === null) {
        budget = await runBudget.look(now, clock.wallNow(), activity.usageReports, (at) =>
          spend.spendNow(activity.accounts(), at, runBudget.wantsDollars),
        );
      }
      if (state.thread !== null && state.thread !== threadWritten) {
        threadWritten = state.thread;
        writeNotice(FILES.thread, {
          thread: state.thread,
          at: clock.wallNow().toISOString(),
        });
      }
      const slotted = observeSlots(state, slots.read(now, folder !== null && !folder.broken), now);
      if (slotted.slotWaitedMs !== state.slotWaitedMs) activity.touch();
      state = slotted;
      activity.flush(state, now, toWall);
      // Rule 0: a disk that can no longer keep the agent's output ends the dispatch before any other rule,
      // an exit in the same poll included (its last lines may be what the disk refused).
      const full = disk.look();
      if (full !== null) {
        return {
          reason: "supervisor-error",
          errorKind: "disk",
          state: observeSlots(state, NO_SLOTS, now),
          budget: null,
          disk: full,
        };
      }
      const cancelRequested = input.interrupt.aborted || fs.existsSync(cancelPath);
      if (steering !== undefined && !exited && !cancelRequested) steering.look(now);
      const steer = steering?.signals(now);
      const judged = decide(
        state,
        { exited, cancelRequested, budget, ...(steer === undefined ? {} : { steer }) },
        limits,
        now,
      );
      state = judged.state;
      const verdict = judged.verdict;
      if (verdict.kind === "stall") {
        writeNotice(FILES.stall, {
          at: clock.wallNow().toISOString(),
          quietMs: Math.round(verdict.quietMs),
        });
        log("stall", { quietMs: Math.round(verdict.quietMs) });
      } else if (verdict.kind === "stop") {
        // A wait for a slot still open ends with the watch: the record counts it up to the decision.
        return {
          reason: verdict.reason,
          errorKind: verdict.errorKind,
          state: observeSlots(state, NO_SLOTS, now),
          budget: verdict.reason === "budget" ? budget : null,
          disk: null,
        };
      }
      const moving = bytes > 0 || sawChange;
      const dueAt = Math.min(
        nextDeadline(state, limits, steer),
        activity.dueAt() ?? Number.POSITIVE_INFINITY,
        runBudget?.dueAt() ?? Number.POSITIVE_INFINITY,
        slots.dueAt() ?? Number.POSITIVE_INFINITY,
      );
      const untilDue = Math.max(
        MIN_SLEEP_MS,
        Math.min(dueAt - clock.now(), usageLog !== null && spend.capped ? USAGE_LOG_POLL_MS : Infinity),
      );
      sleeping = new AbortController();
      wakeOnChange = !moving;
      if (wake.aborted) sleeping.abort();
      await clock.sleep(Math.min(moving ? spec.pollMs : QUIET_POLL_MS, untilDue), sleeping.signal);
      sleeping = null;
      wakeOnChange = false;
    }
  } finally {
    eventTimes.flush(clock.now());
    wake.removeEventListener("abort", onWake);
    folder?.close();
    for (const watch of conversation) watch.close();
    lockReports?.close();
    usageLog?.close();
    events.close();
    stderr.close();
  }
}

/** A backend that throws on a line must not end supervision: the line counts as progress. */
function safeParse(parse: (line: string) => LineFacts, line: string): LineFacts {
  try {
    return parse(line);
  } catch {
    return PROGRESS;
  }
}
