import { CatherdError } from "../domain/errors.js";
import type { RecordFile } from "../domain/schemas.js";
import { FILES, fileIn, placeOf } from "../folder/layout.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { waitUntil, watchFolders } from "../infra/wait-until.js";
import { type DispatchView, inspectDispatch, problemOf } from "./inspect.js";
import { promoteRunOf } from "./queue.js";
import { settleIfDead } from "./settle.js";

/**
 * How often waiting looks again when no record.json event came: fs.watch can miss events on some file
 * systems, and a dispatch that dies without a record sends none.
 */
export const WAIT_FALLBACK_POLL_MS = 500;

export interface AwaitResult {
  records: { dir: string; record: RecordFile }[];
  pending: string[];
  timedOut: boolean;
}

/**
 * Waits until every folder (or, with `any`, the first) has a record. Woken when a folder's record.json
 * appears (fs.watch), with a slow poll as a fallback; a dispatch found dead meanwhile is recorded `lost`.
 */
export async function awaitRecords(
  dirs: readonly string[],
  options: { any: boolean; timeoutMs: number | null; clock?: Clock },
): Promise<AwaitResult> {
  const clock = options.clock ?? systemClock;
  const done = new Map<string, RecordFile>();
  const finished = await waitUntil(
    async () => {
      // Waiting through the queue: each look promotes what can start, so a queue whose supervisors all died
      // still moves while someone waits on it.
      for (const dir of oneDirPerRun(dirs.filter((d) => !done.has(d)))) await promoteRunOf(dir);
      for (const dir of dirs) {
        if (done.has(dir)) continue;
        let view = inspectDispatch(dir);
        view = await settleIfDead(view);
        if (view.record !== null) done.set(dir, view.record);
        // Recorded, but record.json is torn or newer: it will never become readable by waiting.
        else if (view.state === "recorded") throw recordProblem(view);
      }
      return (options.any ? done.size > 0 : done.size === dirs.length) ? true : undefined;
    },
    {
      clock,
      deadline: options.timeoutMs === null ? Number.POSITIVE_INFINITY : clock.now() + options.timeoutMs,
      pollMs: WAIT_FALLBACK_POLL_MS,
      watch: watchFolders(dirs, [FILES.record]),
    },
  );
  return {
    records: dirs.filter((d) => done.has(d)).map((dir) => ({ dir, record: done.get(dir) as RecordFile })),
    pending: dirs.filter((d) => !done.has(d)),
    timedOut: finished === undefined,
  };
}

function oneDirPerRun(dirs: readonly string[]): string[] {
  const byRun = new Map<string, string>();
  for (const dir of dirs) byRun.set(placeOf(dir)?.runDir ?? dir, dir);
  return [...byRun.values()];
}

function recordProblem(view: DispatchView): CatherdError {
  const file = fileIn(view.dir, FILES.record);
  return (
    problemOf(view, FILES.record) ??
    new CatherdError("E_FILE_CORRUPT", `${file} cannot be read`, {
      fix: `inspect it with: cat ${file}`,
      file,
    })
  );
}
