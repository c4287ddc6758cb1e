import * as fs from "node:fs";
import type { CatherdError } from "../../domain/errors.js";
import type {
  AdmitFile,
  ExitFile,
  ProcFile,
  PromotedFile,
  QueuedFile,
  RecordFile,
  SpecFile,
  SupervisorFile,
} from "../../domain/schemas.js";
import { dispatchState, type ReaderDuty, readerDuty, waitsUnpromoted } from "../../domain/state.js";
import type { DispatchState } from "../../domain/vocab.js";
import { agentDispatchId, dispatchIdOf } from "../../folder/ids.js";
import { FILES, type FolderFile, fileIn } from "../../folder/layout.js";
import { type FolderJson, type FolderJsonFile, readFolderJson } from "../../folder/read.js";
import { type Clock, systemClock } from "../../infra/clock.js";
import type { FileRead } from "../../infra/json-file.js";
import { isSameProcess } from "../../infra/process-identity.js";
import { findByDispatchVariable } from "../../infra/sweep.js";

/** Everything a reader knows about one dispatch folder. Reading never writes and never signals. */
export interface DispatchView {
  dir: string;
  dispatchId: string;
  state: DispatchState;
  /**
   * What a reader that finds it so must do (domain/state.ts, `readerDuty`): adopt an orphan, record a
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
  isAlive(pid: number, startTime: string | null): boolean;
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
 */
export function inspectDispatch(
  dir: string,
  { clock = systemClock, probe = diskProbe(dir) }: { clock?: Clock; probe?: FolderProbe } = {},
): DispatchView {
  const problems: CatherdError[] = [];
  const take = <T>(read: FileRead<T>): T | null => {
    if (read.kind === "ok") return read.value;
    if (read.kind === "invalid") problems.push(read.error);
    return null;
  };
  // A record is final: with one, no process matters and none is looked up (status over a long history).
  // One that exists but cannot be read decides nothing: the state is unknown.
  const recordFirst = probe.read(FILES.record);
  const recordUnreadable = cannotRead(recordFirst);
  const settled = recordFirst.kind !== "missing" && !recordUnreadable;
  const alive = (pid: number, startTime: string | null) => !settled && probe.isAlive(pid, startTime);
  const admitRead = probe.read(FILES.admit);
  const admit = take(admitRead);
  const specRead = probe.read(FILES.spec);
  const spec = take(specRead);
  const queued = take(probe.read(FILES.queued));
  // A promoted dispatch's supervisor is started by its promoter: the promoter stands where the dispatcher
  // stands for one admitted to start at once, and is checked before supervisor.json for the same reason.
  const promoted = queued === null ? null : take(probe.read(FILES.promoted));
  const starter = promoted?.by ?? admit?.dispatcher ?? null;
  const dispatcherAlive =
    admit !== null &&
    (queued === null || promoted !== null) &&
    starter !== null &&
    alive(starter.pid, starter.startTime);
  const supervisorRead = probe.read(FILES.supervisor);
  const supervisor = take(supervisorRead);
  // From the same read: a torn supervisor.json still means a supervisor came up.
  const hasSupervisor = supervisorRead.kind !== "missing";
  const supervisorAlive = supervisor !== null && alive(supervisor.pid, supervisor.startTime);
  const procRead = probe.read(FILES.proc);
  const proc = take(procRead);
  const agentAlive = proc !== null && alive(proc.pid, proc.startTime);
  const cancelRequested = probe.exists(FILES.cancel);
  const exitRead = probe.read(FILES.exit);
  const exit = take(exitRead);
  const recordRead = settled ? recordFirst : probe.read(FILES.record);
  const record = take(recordRead);
  const admittedAtMs = admit !== null ? Date.parse(admit.admittedAt) : probe.birthMs();
  const startAskedMs = promoted !== null ? Date.parse(promoted.at) : admittedAtMs;
  const unreadable =
    recordUnreadable ||
    [admitRead, specRead, supervisorRead, procRead, exitRead, recordRead].some(cannotRead);
  let state = dispatchState({
    unreadable,
    // A torn or newer record still means "recorded": nobody may record the dispatch again.
    hasRecord: recordRead.kind !== "missing" && !cannotRead(recordRead),
    hasExit: exitRead.kind !== "missing",
    hasSupervisor,
    supervisorAlive,
    agentAlive,
    cancelRequested,
    dispatcherAlive,
    ageMs: Number.isFinite(startAskedMs)
      ? clock.wallNow().getTime() - startAskedMs
      : Number.POSITIVE_INFINITY,
    queue:
      queued === null
        ? "no"
        : waitsUnpromoted({ queued: true, promoted: promoted !== null, ended: exitRead.kind !== "missing" })
          ? "waiting"
          : "promoted",
  });
  // The supervisor may have died after spawning the agent but before naming it in proc.json, or the agent
  // may have ended and left a process behind: anything still carrying the dispatch's variable is an orphan
  // to stop (catherd cancel), not a lost dispatch to record while it runs on.
  if (state === "lost" && probe.carriesDispatch(agentDispatchId({ dir, spec }))) {
    state = "orphaned";
  }
  return {
    dir,
    dispatchId: dispatchIdOf({ dir, admit, spec }),
    state,
    duty: readerDuty(state, {
      supervisorAlive,
      agentNamedAlive: exit === null && proc !== null && proc.startTime !== null && agentAlive,
    }),
    admit,
    spec,
    queued,
    promoted,
    supervisor,
    proc,
    exit,
    record,
    problems,
    admittedAtMs,
  };
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
