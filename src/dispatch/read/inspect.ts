import * as fs from "node:fs";
import { checkStillDue } from "../../domain/check/check.js";
import type { CatherdError } from "../../domain/errors.js";
import type {
  AdmitFile,
  ExitFile,
  PlacementFile,
  ProcFile,
  PromotedFile,
  QueuedFile,
  RecordFile,
  SpecFile,
  SupervisorFile,
} from "../../domain/schemas.js";
import { type HostIdentity, type HostRelation, hostRelation } from "../../domain/state/host.js";
import {
  dispatchState,
  type ReaderDuty,
  readerDuty,
  STARTER_ELSEWHERE_MS,
  waitsUnpromoted,
} from "../../domain/state/state.js";
import {
  type EngineAnswer,
  judgeSupervisor,
  type LockSight,
  SUPERVISOR_LOCK_STALE_MS,
} from "../../domain/state/supervisor-judgement.js";
import type { DispatchState } from "../../domain/vocab.js";
import type { EngineSight } from "../../engines/engine.js";
import { agentDispatchId, dispatchIdOf } from "../../folder/dispatch-id-of.js";
import { FILES, type FolderFile, fileIn } from "../../folder/layout.js";
import { type FolderJson, type FolderJsonFile, readFolderJson } from "../../folder/read.js";
import { type Clock, systemClock } from "../../infra/clock.js";
import { hostIdentity } from "../../infra/host-identity.js";
import type { FileRead } from "../../infra/json-file.js";
import { sightOfLock } from "../../infra/lock-sight.js";
import { isSameProcess } from "../../infra/process-identity.js";
import { findByDispatchVariable } from "../../infra/sweep.js";
import { phaseOf, wordsOf } from "./engine-sight.js";

/** Everything a reader knows about one dispatch folder. Reading never writes and never signals. */
export interface DispatchView {
  dir: string;
  dispatchId: string;
  state: DispatchState;
  /**
   * What a reader that finds it so must do (domain/state/state.ts, `readerDuty`): adopt an orphan, record a
   * dead dispatch, or nothing. Only the reader gate (dispatch/reader.ts) acts on it.
   */
  duty: ReaderDuty;
  admit: AdmitFile | null;
  spec: SpecFile | null;
  /** queued.json: admitted queued (it stays after the dispatch is promoted). */
  queued: QueuedFile | null;
  /** promoted.json: chosen to start from the queue. */
  promoted: PromotedFile | null;
  supervisor: SupervisorFile | null;
  proc: ProcFile | null;
  exit: ExitFile | null;
  record: RecordFile | null;
  /** placement.json: the job an engine took its supervisor as (specs/placement.md); null for a local one. */
  placement: PlacementFile | null;
  /** What the engine said of that job, when the reader asked it (reader.ts asks where it matters). */
  job: EngineSight | null;
  /**
   * Why the state is `unknown` (or an `exited` dispatch is left unrecorded) though every file reads: its
   * supervisor runs on another host or PID namespace, its lock is stale and no engine could tell.
   */
  undecided: string | null;
  /** Files that exist but could not be read: each a clear error, never a crash. */
  problems: CatherdError[];
  /** When the dispatch was admitted (or the folder created), ms since the epoch. */
  admittedAtMs: number;
}

/**
 * How a reader looks at a folder and its processes. Injectable so the order of observations — which is
 * what makes a reading sound while the dispatch moves on underneath — can be tested step by step.
 */
export interface FolderProbe {
  read<F extends FolderJsonFile>(file: F): FileRead<FolderJson<F>>;
  exists(file: FolderFile): boolean;
  /** Alive by pid and start time, in the reader's /proc: asked only of a process of the reader's host. */
  isAlive(pid: number, startTime: string | null): boolean;
  /** The reader's own host: what a recorded process's host is compared with (domain/state/host.ts). */
  host(): HostIdentity;
  /** supervisor.lock as seen now: missing, or the age of its last refresh. */
  lock(nowMs: number): LockSight;
  /** Whether some live process carries CATHERD_DISPATCH=<dispatchId> (Linux: /proc/<pid>/environ). */
  carriesDispatch(dispatchId: string): boolean;
  /** When the folder appeared, ms since the epoch (NaN if unknown). */
  birthMs(): number;
}

export function diskProbe(dir: string): FolderProbe {
  return {
    read: (file) => readFolderJson(dir, file),
    exists: (file) => fs.existsSync(fileIn(dir, file)),
    isAlive: isSameProcess,
    host: hostIdentity,
    lock: (nowMs) => sightOfLock(fileIn(dir, FILES.supervisorLock), nowMs),
    carriesDispatch: (dispatchId) => findByDispatchVariable(dispatchId).length > 0,
    birthMs: () => folderBirth(dir),
  };
}

/**
 * Reads a dispatch folder. The order is the contract that keeps a live dispatch from being judged lost:
 * each process writes its file before it exits (the dispatcher waits for supervisor.json, the supervisor
 * writes exit.json then record.json), so every process is checked alive *before* the file it would write
 * is read. A process seen dead followed by its file seen missing means it really died without writing it;
 * the reverse order could see "no file yet" and then "process gone" across a normal hand-over. Last, and
 * only for a dispatch that looks lost, the probe looks for any process still carrying its CATHERD_DISPATCH.
 *
 * A process recorded on another host or PID namespace (specs/placement.md, "Identity across hosts") is
 * never looked up in this reader's /proc: a supervisor there is judged by its lock and by `job`, what its
 * engine said — read by the caller before this (dispatch/reader.ts), as a process is read before its files.
 */
export function inspectDispatch(
  dir: string,
  {
    clock = systemClock,
    probe = diskProbe(dir),
    job = null,
  }: { clock?: Clock; probe?: FolderProbe; job?: EngineSight | null } = {},
): DispatchView {
  const nowMs = clock.wallNow().getTime();
  const reader = probe.host();
  // A record is final: with one, no process matters and none is looked up (status over a long history).
  // One that exists but cannot be read decides nothing: the state is unknown.
  const recordFirst = probe.read(FILES.record);
  const settled = recordFirst.kind !== "missing" && !cannotRead(recordFirst);
  const r = readingOf(probe, nowMs, reader, settled);
  const observed = observe(r, recordFirst, job);
  return viewOf(dir, r, observed, orphanedOrAsIs(dir, r, observed, stateOf(observed)));
}

/** A reading by `probe`, its problems gathered as it takes each file. */
function readingOf(probe: FolderProbe, nowMs: number, reader: HostIdentity, settled: boolean): Reading {
  const problems: CatherdError[] = [];
  return {
    probe,
    nowMs,
    reader,
    settled,
    problems,
    take: (read) => {
      if (read.kind === "ok") return read.value;
      if (read.kind === "invalid") problems.push(read.error);
      return null;
    },
    alive: (pid, startTime) => !settled && probe.isAlive(pid, startTime),
  };
}

/** Each process checked before the file it writes: the starter, the supervisor, the agent, then the ending. */
function observe(r: Reading, recordFirst: FileRead<RecordFile>, job: EngineSight | null): Observed {
  const start = readStart(r);
  const sup = readSupervisor(r, job, start.admit);
  const agent = readAgent(r);
  const exitRead = r.probe.read(FILES.exit);
  const exit = r.take(exitRead);
  const recordRead = r.settled ? recordFirst : r.probe.read(FILES.record);
  const record = r.take(recordRead);
  const reads = [start.admitRead, start.specRead, sup.placementRead, sup.supervisorRead, agent.procRead];
  const unreadable = [recordFirst, ...reads, exitRead, recordRead].some(cannotRead);
  const checkDue =
    record === null && checkStillDue(start.spec, exit, () => r.take(r.probe.read(FILES.check)));
  // Before its supervisor came up, a placed dispatch is what its engine says of its job.
  const unplaced = !sup.hasSupervisor && !r.settled ? sup.placement : null;
  const phase = unplaced !== null && job !== null ? phaseOf(job) : null;
  const undecided =
    unplaced !== null && phase === null
      ? unplacedWhy(r, unplaced, sup.judged.undecided, job)
      : sup.judged.undecided;
  return {
    start,
    sup,
    agent,
    exitRead,
    exit,
    recordRead,
    record,
    unreadable,
    undecided,
    phase,
    job,
    checkDue,
  };
}

/** The view of the folder in `state`, with the duty a reader that finds it so has. */
function viewOf(dir: string, r: Reading, o: Observed, state: DispatchState): DispatchView {
  const { start, sup, agent, exit, undecided } = o;
  return {
    dir,
    dispatchId: dispatchIdOf({ dir, admit: start.admit, spec: start.spec }),
    state,
    duty: readerDuty(state, {
      supervisorAlive: sup.judged.alive,
      agentNamedAlive: exit === null && agent.proc !== null && agent.proc.startTime !== null && agent.alive,
      // A placed dispatch's supervisor is its engine's job: none is started outside it.
      mayAdopt: !sup.placed,
      undecided: undecided !== null,
    }),
    ...start.files,
    supervisor: sup.supervisor,
    proc: agent.proc,
    exit,
    record: o.record,
    placement: sup.placement,
    job: o.job,
    undecided: state === "unknown" || state === "exited" ? undecided : null,
    problems: r.problems,
    admittedAtMs: start.admittedAtMs,
  };
}

/** One inspection under way: the probe, the time and host it reads at, and what it found so far. */
interface Reading {
  probe: FolderProbe;
  nowMs: number;
  reader: HostIdentity;
  /** A readable record exists: no process is looked up. */
  settled: boolean;
  /** Each file that exists but could not be read, in the order read. */
  problems: CatherdError[];
  /** A read's value, its problem kept; null when missing or invalid. */
  take<T>(read: FileRead<T>): T | null;
  /** Alive by pid and start time in this reader's /proc; never asked once settled. */
  alive(pid: number, startTime: string | null): boolean;
}

/** What a dispatch was asked to start with, and whether the process starting its supervisor still may. */
function readStart(r: Reading) {
  const { probe } = r;
  const admitRead = probe.read(FILES.admit);
  const admit = r.take(admitRead);
  const specRead = probe.read(FILES.spec);
  const spec = r.take(specRead);
  const queued = r.take(probe.read(FILES.queued));
  // A promoted dispatch's supervisor is started by its promoter: the promoter stands where the dispatcher
  // stands for one admitted to start at once, and is checked before supervisor.json for the same reason.
  const promoted = queued === null ? null : r.take(probe.read(FILES.promoted));
  const admittedAtMs = admit !== null ? Date.parse(admit.admittedAt) : probe.birthMs();
  const startAskedMs = promoted !== null ? Date.parse(promoted.at) : admittedAtMs;
  const ageMs = Number.isFinite(startAskedMs) ? r.nowMs - startAskedMs : Number.POSITIVE_INFINITY;
  const starter = promoted?.by ?? admit?.dispatcher ?? null;
  const dispatcherAlive =
    admit !== null &&
    (queued === null || promoted !== null) &&
    starter !== null &&
    !r.settled &&
    starterAlive(hostRelation(starter.host, r.reader), () => r.alive(starter.pid, starter.startTime), ageMs);
  return {
    admitRead,
    admit,
    specRead,
    spec,
    files: { admit, spec, queued, promoted },
    admittedAtMs,
    ageMs,
    dispatcherAlive,
  };
}

/** Where the dispatch was placed, and its supervisor as judged from here (judgeOurs). */
function readSupervisor(r: Reading, job: EngineSight | null, admit: AdmitFile | null) {
  const { probe } = r;
  // The dispatcher (or the promoter) writes placement.json once its engine took the job.
  const placementRead = probe.read(FILES.placement);
  const placement = r.take(placementRead);
  const supervisorRead = probe.read(FILES.supervisor);
  const supervisor = r.take(supervisorRead);
  const where = supervisor === null ? "same" : hostRelation(supervisor.host, r.reader);
  const judged = r.settled
    ? { alive: false, undecided: null }
    : judgeOurs({
        supervisor,
        where,
        placement,
        job,
        probe,
        alive: r.alive,
        nowMs: r.nowMs,
        problems: r.problems,
      });
  return {
    placementRead,
    placement,
    supervisorRead,
    supervisor,
    // From the same read: a torn supervisor.json still means a supervisor came up.
    hasSupervisor: supervisorRead.kind !== "missing",
    placed: admit?.placement !== undefined || placementRead.kind !== "missing",
    where,
    judged,
  };
}

/** The agent proc.json names, alive only when it runs on this reader's host, and whether a cancel was asked. */
function readAgent(r: Reading) {
  const procRead = r.probe.read(FILES.proc);
  const proc = r.take(procRead);
  // An agent on another host or PID namespace is never looked up here: its supervisor answers for it.
  const here = proc !== null && hostRelation(proc.host, r.reader) === "same";
  const alive = here && r.alive(proc.pid, proc.startTime);
  return { procRead, proc, here, alive, cancelRequested: r.probe.exists(FILES.cancel) };
}

/** Everything read of the folder and its processes, in the order read: what its state is decided by. */
interface Observed {
  start: ReturnType<typeof readStart>;
  sup: ReturnType<typeof readSupervisor>;
  agent: ReturnType<typeof readAgent>;
  exitRead: FileRead<unknown>;
  exit: ExitFile | null;
  recordRead: FileRead<unknown>;
  record: RecordFile | null;
  unreadable: boolean;
  undecided: string | null;
  /** What its engine says of the job of a placed dispatch whose supervisor has not come up yet. */
  phase: ReturnType<typeof phaseOf>;
  /** What the engine said of the job, when the reader asked it. */
  job: EngineSight | null;
  /** The agent ended and its check is still due (state `verifying`). */
  checkDue: boolean;
}

/**
 * Why a placed dispatch whose supervisor has not come up, and whose engine did not say where its job is,
 * cannot be told (an engine that could not be reached is a problem too); the supervisor's own why first.
 */
function unplacedWhy(
  r: Reading,
  placement: PlacementFile,
  supervisorWhy: string | null,
  job: EngineSight | null,
): string {
  if (job?.kind === "unreachable") r.problems.push(job.error);
  if (supervisorWhy !== null) return supervisorWhy;
  return job === null
    ? `${jobName(placement)} was not asked about`
    : `${placement.engine} did not answer about job ${placement.jobId}`;
}

/** The state the observations say (domain/state/state.ts), before the orphan check. */
function stateOf(o: Observed): DispatchState {
  const { queued, promoted } = o.start.files;
  return dispatchState({
    unreadable: o.unreadable,
    // A torn or newer record still means "recorded": nobody may record the dispatch again.
    hasRecord: o.recordRead.kind !== "missing" && !cannotRead(o.recordRead),
    hasExit: o.exitRead.kind !== "missing",
    checkDue: o.checkDue,
    hasSupervisor: o.sup.hasSupervisor,
    supervisorAlive: o.sup.judged.alive,
    undecided: o.undecided !== null,
    job: o.phase,
    agentAlive: o.agent.alive,
    cancelRequested: o.agent.cancelRequested,
    dispatcherAlive: o.start.dispatcherAlive,
    ageMs: o.start.ageMs,
    queue:
      queued === null
        ? "no"
        : waitsUnpromoted({ queued: true, promoted: promoted !== null, ended: o.exitRead.kind !== "missing" })
          ? "waiting"
          : "promoted",
  });
}

/**
 * A lost dispatch found orphaned after all. The supervisor may have died after spawning the agent but
 * before naming it in proc.json, or the agent may have ended and left a process behind: anything still
 * carrying the dispatch's variable is an orphan to stop (catherd cancel), not a lost dispatch to record
 * while it runs on. Only on the reader's host, and never for a placed dispatch whose supervisor did not
 * come up (its job ran nothing). A sandboxed agent runs only once proc.json names it: without proc.json,
 * what carries the variable is its sandbox, which ends by itself without running it
 * (specs/sandbox.md, "A supervisor's death while the sandbox goes up").
 */
function orphanedOrAsIs(dir: string, r: Reading, o: Observed, state: DispatchState): DispatchState {
  if (state !== "lost") return state;
  const { spec } = o.start;
  const processesHere = o.sup.supervisor === null ? !o.sup.placed : o.sup.where === "same";
  const sandboxEndingUnrun = spec?.sandbox !== undefined && o.agent.proc === null;
  const carried =
    processesHere &&
    !sandboxEndingUnrun &&
    (o.agent.proc === null || o.agent.here) &&
    r.probe.carriesDispatch(agentDispatchId({ dir, spec }));
  return carried ? "orphaned" : state;
}

/**
 * Whether the process starting the supervisor (the dispatcher, or the promoter) still may: by its pid on
 * the reader's host; gone with its boot; elsewhere alive until it would itself have given up waiting for
 * the supervisor and recorded the dispatch (STARTER_ELSEWHERE_MS).
 */
function starterAlive(relation: HostRelation, aliveHere: () => boolean, ageMs: number): boolean {
  if (relation === "same") return aliveHere();
  return relation === "other" && ageMs < STARTER_ELSEWHERE_MS;
}

/**
 * Whether the supervisor of supervisor.json lives (specs/placement.md, "Judging a supervisor"): on the
 * reader's host by its pid and start time; elsewhere by its lock and its engine. `undecided` says why it
 * cannot be told. A placed dispatch's supervisor dead by its pid here is recorded only once its engine
 * says how the job ended: until then that is undecided too.
 */
function judgeOurs(o: {
  supervisor: SupervisorFile | null;
  where: HostRelation;
  placement: PlacementFile | null;
  job: EngineSight | null;
  probe: FolderProbe;
  alive: (pid: number, startTime: string | null) => boolean;
  nowMs: number;
  problems: CatherdError[];
}): { alive: boolean; undecided: string | null } {
  const { supervisor, placement, job } = o;
  if (supervisor === null) return { alive: false, undecided: null };
  const phase = job === null ? null : phaseOf(job);
  if (o.where === "same") {
    if (o.alive(supervisor.pid, supervisor.startTime)) return { alive: true, undecided: null };
    if (placement === null || (phase !== null && phase !== "running"))
      return { alive: false, undecided: null };
    if (job?.kind === "unreachable") o.problems.push(job.error);
    return {
      alive: false,
      undecided:
        phase === "running"
          ? `supervisor ${supervisor.pid} is gone; ${placement.engine} is still ending job ${placement.jobId}`
          : `supervisor ${supervisor.pid} is gone, and ${placement.engine} did not say how job ${placement.jobId} ended`,
    };
  }
  const engine: EngineAnswer =
    placement === null
      ? { kind: "none" }
      : job === null
        ? { kind: "unreachable", words: `${jobName(placement)} was not asked about` }
        : job.kind === "unreachable"
          ? { kind: "unreachable", words: wordsOf(job) }
          : { kind: "job", phase: job.phase, words: wordsOf(job) };
  const verdict = judgeSupervisor({
    relation: o.where,
    processAlive: false,
    lock: o.probe.lock(o.nowMs),
    lockStaleMs: SUPERVISOR_LOCK_STALE_MS,
    engine,
  });
  if (verdict.verdict === "unknown") {
    if (job?.kind === "unreachable") o.problems.push(job.error);
    const host = supervisor.host?.name ?? "another host";
    return { alive: false, undecided: `supervisor ${supervisor.pid} runs on ${host}: ${verdict.why}` };
  }
  return { alive: verdict.verdict === "alive", undecided: null };
}

/** What a placement is called in a reader's words: "slurm job 12". */
function jobName(placement: Pick<PlacementFile, "engine" | "jobId">): string {
  return `${placement.engine} job ${placement.jobId}`;
}

/** Whether a file exists but could not be read at all (not merely torn or newer). */
function cannotRead(read: FileRead<unknown>): boolean {
  return read.kind === "invalid" && read.error.code === "E_IO_READ";
}

/** The problem met reading one file of the folder (torn, newer, unreadable), if any. */
export function problemOf(
  view: Pick<DispatchView, "dir" | "problems">,
  file: FolderFile,
): CatherdError | undefined {
  return view.problems.find((p) => p.file === fileIn(view.dir, file));
}

function folderBirth(dir: string): number {
  try {
    const stat = fs.statSync(dir);
    return stat.birthtimeMs > 0 ? stat.birthtimeMs : stat.ctimeMs;
  } catch {
    return Number.NaN;
  }
}
