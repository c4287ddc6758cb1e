import * as fs from "node:fs";
import * as path from "node:path";
import type { Backend } from "../../backends/types.js";
import { cancelDispatch as cancel, cancelledSummary } from "../../dispatch/cancel.js";
import type { DispatchView } from "../../dispatch/read/inspect.js";
import { listDispatchDirs, locateDispatch } from "../../dispatch/read/locate.js";
import { queuePositions } from "../../dispatch/read/queued.js";
import { type DispatchRow, foldChains, liveRow, recordedRow } from "../../dispatch/read/rows.js";
import { promoteQuietly, readDispatch as readThroughGate } from "../../dispatch/reader.js";
import { backendOf } from "../../folder/backend.js";
import { attemptDirs } from "../../folder/chain.js";
import { humanLine } from "../../folder/human-line.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { type Clock, systemClock } from "../../infra/clock.js";
import { okValue } from "../../infra/json-file.js";
import type { RunPaths } from "../../infra/paths.js";
import { isSameProcess } from "../../infra/process-identity.js";

// The dashboard reads dispatches here and only here, with the readers the verbs use, so that what the
// page shows is what `status`, `show` and `logs` say: a live dispatch is read through the reader gate
// (src/dispatch/reader.ts: its duties done, as every reader does them), then made a row by status's own
// liveRow; a recorded one from its record, as status reads it; event lines are logs' human lines; cancel
// is cancel's use case. (The spec's --env values are redacted as show redacts them: redactEnv, detail.ts.)

export type { DispatchRow, DispatchView };

/** A dispatch as the verbs read it: its view (after settling) and its row as `status` has it. */
export interface ReadDispatch {
  view: DispatchView;
  row: DispatchRow;
}

/**
 * Reads one dispatch folder as `status` does; `positions` places a queued one in its run's queue. A
 * recorded one costs what status pays for it — its record — plus admit.json and the queue's two files
 * for its place on the timeline; its view then holds those alone (`full` reads everything, for its page).
 */
export async function readDispatch(
  run: RunPaths,
  dir: string,
  positions: Map<string, number>,
  full = false,
): Promise<ReadDispatch> {
  const record = full ? null : okValue(readFolderJson(dir, FILES.record));
  if (record !== null) {
    const admit = okValue(readFolderJson(dir, FILES.admit));
    const queued =
      admit !== null && fs.existsSync(fileIn(dir, FILES.queued))
        ? okValue(readFolderJson(dir, FILES.queued))
        : null;
    const promoted = queued === null ? null : okValue(readFolderJson(dir, FILES.promoted));
    const view: DispatchView = {
      dir,
      dispatchId: record.dispatchId,
      state: "recorded",
      duty: null,
      admit,
      spec: null,
      queued,
      promoted,
      placement: null,
      job: null,
      supervisor: null,
      proc: null,
      exit: null,
      record,
      problems: [],
      undecided: null,
      admittedAtMs: admit === null ? Number.NaN : Date.parse(admit.admittedAt),
    };
    return { view, row: { ...recordedRow(run, dir, record), admittedAt: admit?.admittedAt ?? null } };
  }
  const view = await readThroughGate(dir, { promote: false });
  return { view, row: liveRow(run, view, positions) };
}

/**
 * Whether a live dispatch's supervisor is still the process supervisor.json names (pid and start time):
 * while it is, its folder's own changes tell what moves, and only a dead one needs a reader.
 */
export function stillSupervised(view: DispatchView): boolean {
  return view.supervisor !== null && isSameProcess(view.supervisor.pid, view.supervisor.startTime);
}

/** The places of a run's queued dispatches (1 = next), as status numbers them. */
export function queuePositionsOf(run: RunPaths): Map<string, number> {
  return queuePositions(run);
}

/** Every dispatch folder of a run, newest first. */
export function dispatchDirsOf(run: RunPaths): string[] {
  return listDispatchDirs(run);
}

/** The folder of the run's dispatch `dispatchId`, whatever its name; null when the run has none such. */
export function dispatchDirById(run: RunPaths, dispatchId: string): string | null {
  try {
    const dir = locateDispatch(run, dispatchId);
    return path.basename(dir) === dispatchId ? dir : null;
  } catch {
    return null;
  }
}

/** Starts what the run's queue can start, as every reader of a run does; best effort. */
export async function promoteQueue(run: RunPaths): Promise<void> {
  await promoteQuietly(run, systemClock, []);
}

/** One row per chain, as status folds them (rows are copied: folding writes their `earlier`). */
export function foldedRows(rows: readonly DispatchRow[], from: Map<string, string>): DispatchRow[] {
  return foldChains(
    rows.map((r) => ({ ...r, earlier: [] })),
    from,
  );
}

/** Every attempt folder of the chain `dir` belongs to, first to last. */
export function chainDirsOf(dir: string): string[] {
  return attemptDirs(dir);
}

/** The backend that reads the folder's event stream. */
export function backendOfView(view: DispatchView): Backend {
  return backendOf(view);
}

/** An event line as `logs` shows it (an exec command's own lines as they are); null: nothing to show. */
export function humanLineOf(backend: Backend, line: string): string | null {
  return backend.plainText ? line : humanLine(backend, line);
}

/**
 * Cancels the dispatch of `dir` (a chain: the chain) with `catherd cancel`'s use case; answers as
 * `catherd cancel --json` does.
 */
export async function cancelDispatch(dir: string, clock: Clock): Promise<unknown> {
  return { cancelled: cancelledSummary(await cancel(dir, { clock })) };
}
