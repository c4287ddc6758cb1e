import * as fs from "node:fs";
import * as path from "node:path";
import type { CatherdError } from "../domain/errors.js";
import {
  type AdmitFile,
  admitFileSchema,
  type ExitFile,
  exitFileSchema,
  type ProcFile,
  procFileSchema,
  type RecordFile,
  recordFileSchema,
  type SpecFile,
  type SupervisorFile,
  specFileSchema,
  supervisorFileSchema,
} from "../domain/schemas.js";
import { dispatchState } from "../domain/state.js";
import type { DispatchState } from "../domain/vocab.js";
import { type FileRead, readJsonFile } from "../infra/json-file.js";
import { isSameProcess } from "../infra/process-identity.js";
import { findByDispatchVariable } from "../infra/sweep.js";

/** Everything a reader knows about one dispatch folder. Reading never writes and never signals. */
export interface DispatchView {
  dir: string;
  dispatchId: string;
  state: DispatchState;
  admit: AdmitFile | null;
  spec: SpecFile | null;
  supervisor: SupervisorFile | null;
  proc: ProcFile | null;
  exit: ExitFile | null;
  record: RecordFile | null;
  /** Files that exist but could not be read: each a clear error, never a crash. */
  problems: CatherdError[];
  /** When the dispatch was admitted (or the folder created), ms since the epoch. */
  admittedAtMs: number;
}

export function inspectDispatch(dir: string, nowMs = Date.now()): DispatchView {
  const problems: CatherdError[] = [];
  const take = <T>(read: FileRead<T>): T | null => {
    if (read.kind === "ok") return read.value;
    if (read.kind === "invalid") problems.push(read.error);
    return null;
  };
  const file = (name: string) => path.join(dir, name);
  const admit = take(readJsonFile(file("admit.json"), admitFileSchema));
  const spec = take(readJsonFile(file("spec.json"), specFileSchema));
  const supervisor = take(readJsonFile(file("supervisor.json"), supervisorFileSchema));
  const proc = take(readJsonFile(file("proc.json"), procFileSchema));
  const exitRead = readJsonFile(file("exit.json"), exitFileSchema);
  const exit = take(exitRead);
  const recordRead = readJsonFile(file("record.json"), recordFileSchema);
  const record = take(recordRead);
  const admittedAtMs = admit !== null ? Date.parse(admit.admittedAt) : folderBirth(dir);
  const hasSupervisor = supervisor !== null || fs.existsSync(file("supervisor.json"));
  let state = dispatchState({
    // A torn or newer record still means "recorded": nobody may record the dispatch again.
    hasRecord: recordRead.kind !== "missing",
    hasExit: exitRead.kind !== "missing",
    hasSupervisor,
    supervisorAlive: supervisor !== null && isSameProcess(supervisor.pid, supervisor.startTime),
    agentAlive: proc !== null && isSameProcess(proc.pid, proc.startTime),
    cancelRequested: fs.existsSync(file("cancel")),
    dispatcherAlive:
      !hasSupervisor && admit !== null && isSameProcess(admit.dispatcher.pid, admit.dispatcher.startTime),
    ageMs: Number.isFinite(admittedAtMs) ? nowMs - admittedAtMs : Number.POSITIVE_INFINITY,
  });
  // The supervisor may have died after spawning the agent but before naming it in proc.json, or the agent
  // may have ended and left a process behind: anything still carrying the dispatch's variable is an orphan
  // to stop (catherd cancel), not a lost dispatch to record while it runs on.
  if (state === "lost" && findByDispatchVariable(agentDispatchId({ dir, spec })).length > 0) {
    state = "orphaned";
  }
  return {
    dir,
    dispatchId: admit?.dispatchId ?? spec?.dispatchId ?? path.basename(dir),
    state,
    admit,
    spec,
    supervisor,
    proc,
    exit,
    record,
    problems,
    admittedAtMs,
  };
}

/** The value of CATHERD_DISPATCH in the dispatch's processes: spec.dispatchId, else the folder's name. */
export function agentDispatchId(view: Pick<DispatchView, "dir" | "spec">): string {
  return view.spec?.dispatchId ?? path.basename(view.dir);
}

function folderBirth(dir: string): number {
  try {
    const stat = fs.statSync(dir);
    return stat.birthtimeMs > 0 ? stat.birthtimeMs : stat.ctimeMs;
  } catch {
    return Number.NaN;
  }
}
