import type { Backend } from "../src/backends/types.js";
import type { Spec } from "../src/domain/schemas.js";
import type { LineFacts } from "../src/domain/watch/facts.js";
import type { WatchLimits, WatchState } from "../src/domain/watch/watch.js";
import { FILES, fileIn } from "../src/folder/layout.js";
import type { FolderJsonFile } from "../src/folder/read.js";
import { type FolderJsonBody, writeFolderJson } from "../src/folder/write.js";
import { ActivityWriter } from "./activity.js";
import { AgentSensor } from "./agent-sensor.js";
import type { RunningChild } from "./child.js";
import type { SupervisorDeps } from "./deps.js";
import { DiskWatch } from "./disk-watch.js";
import type { SupervisorLog } from "./log.js";
import { News } from "./news.js";
import { QuotaKeeper, quotaSensor } from "./quota-file.js";
import type { Resume } from "./resume-point.js";
import { RunBudgetWatch } from "./run-budget-watch.js";
import { lookUntilStop, type Sensor, type Stop } from "./sensor.js";
import {
  activitySensor,
  cancelSensor,
  diskSensor,
  slotSensor,
  spendingSensor,
  steeringSensor,
  threadSensor,
  usageLogSensor,
} from "./sensors.js";
import { SlotReports } from "./slot-reports.js";
import { SpendWatch } from "./spend-watch.js";
import type { Steering } from "./steering.js";
import { UsageLogReader } from "./usage-log.js";
import { startState, WatchCore } from "./watch-core.js";

export { QUIET_POLL_MS } from "../src/domain/watch/next-look.js";
export { POLL_BUDGET_BYTES } from "./agent-sensor.js";

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

/** How the watch ended (sensor.ts, Stop), and the state it ended in. */
export interface WatchOutcome extends Stop {
  state: WatchState;
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
 * The thin loop of specs/supervisor.md ("The loop"): at each poll the sensors look in turn — the agent's
 * exit and new lines (parsed by the backend, folded by the pure `observe`), the CLI's usage log, the
 * spend, thread.json, the locks' reports, activity.json, the disk, a cancel, the conversation, the
 * output's flow — then the pure `decide` judges and the loop does what it says. It sleeps until the
 * earliest next look any sensor or the rules (`nextDeadline`) asked for, between 5 ms and QUIET_POLL_MS,
 * or until news cuts the sleep short (news.ts): while output flows it reads every pollMs, and a quiet
 * agent costs a wake-up per deadline and per QUIET_POLL_MS (and the lock's refreshes).
 */
export async function watchAgent(input: WatchInput): Promise<WatchOutcome> {
  const { clock } = input.deps;
  const watch = assemble(input);
  try {
    const { stop, at } = await lookUntilStop({
      clock,
      sensors: watch.sensors,
      rules: watch.core,
      sleep: (ms) => watch.news.sleep(ms),
    });
    return { ...stop, state: watch.core.endedAt(at) };
  } finally {
    watch.close(clock.now());
  }
}

interface Watch {
  core: WatchCore;
  sensors: Sensor[];
  news: News;
  close(now: number): void;
}

/** The watch of one dispatch: its core, its sensors in the order they look, and what wakes it. */
function assemble(input: WatchInput): Watch {
  const { dir, spec, backend, child, deps, log, resume, steering } = input;
  const { clock, files } = deps;
  const disk = new DiskWatch(dir, log);
  const notice = noticeWriter(input, disk);
  const core = new WatchCore(startState(resume, clock.now()), limitsOf(spec), (quietMs) => {
    notice(FILES.stall, { at: clock.wallNow().toISOString(), quietMs: Math.round(quietMs) });
    log("stall", { quietMs: Math.round(quietMs) });
  });
  const startedAt = core.state.startedAt;
  const wallAtStart = resume?.startedAtWall ?? clock.wallNow().getTime();
  const wallOf = (mono: number) => wallAtStart + (mono - startedAt);
  const spend = new SpendWatch(backend, spec, spec, log);
  const runBudget = RunBudgetWatch.of(dir, log);
  const activity = new ActivityWriter(
    dir,
    files,
    (accounts, at) => spend.priced(accounts, at),
    (error) => disk.refused(error, FILES.activity),
  );
  const quota = new QuotaKeeper(notice, wallOf);
  const fold = (file: string, parsed: LineFacts, at: number) => {
    const facts = steering === undefined ? parsed : steering.observe(parsed, at);
    core.line(facts, at);
    if (facts.quota !== undefined) quota.note(facts.quota, at);
    const ignored = activity.note(facts);
    if (ignored !== null) spend.ignore(file, ignored);
    if (facts.retry !== undefined) log("retry", { attempt: facts.retry.attempt, max: facts.retry.max });
  };
  const agent = new AgentSensor({
    dir,
    backend,
    child,
    log,
    fold,
    backlogAt: resume?.linesAt ?? null,
    wallOf,
  });
  const slots = new SlotReports(dir, clock);
  const news = new News({
    dir,
    clock,
    pollMs: spec.pollMs,
    wake: AbortSignal.any([input.interrupt, child.exitSignal]),
    steerable: steering !== undefined,
    onLockReport: () => slots.changed(),
    output: agent,
  });
  const usageLog =
    backend.usageLog === undefined
      ? null
      : new UsageLogReader(dir, backend.usageLog, { ...process.env, ...spec.env }, wallAtStart);
  const sensors: (Sensor | null)[] = [
    agent,
    usageLog === null ? null : usageLogSensor(usageLog, core, { activity, spend, quota }),
    // Before anything that may end the watch in its look: the windows the output reported are kept.
    quotaSensor(quota),
    spend.capped || runBudget !== null ? spendingSensor(spend, runBudget, activity, clock) : null,
    threadSensor(core, resume?.thread ?? null, (thread) =>
      notice(FILES.thread, { thread, at: clock.wallNow().toISOString() }),
    ),
    slotSensor(slots, core, activity, () => news.watched),
    activitySensor(activity, core, (mono) => new Date(wallOf(mono)).toISOString()),
    diskSensor(disk),
    cancelSensor(fileIn(dir, FILES.cancel), input.interrupt),
    steering === undefined ? null : steeringSensor(steering),
    // Last: the changes of the whole poll count for the flow.
    news,
  ];
  const close = (now: number) => {
    agent.close(now);
    quota.flush();
    news.close();
    usageLog?.close();
  };
  return { core, sensors: sensors.filter((s) => s !== null), news, close };
}

/** thread.json and stall.json inform readers; failing to write one is logged, never fatal. */
function noticeWriter(input: WatchInput, disk: DiskWatch) {
  return <F extends FolderJsonFile>(file: F, body: FolderJsonBody<F>) => {
    try {
      writeFolderJson(input.dir, file, body, input.deps.files);
    } catch (error) {
      input.log("write-failed", { file, message: error instanceof Error ? error.message : String(error) });
      disk.refused(error, file);
    }
  };
}
