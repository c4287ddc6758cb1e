import { CatherdError } from "../domain/errors.js";
import type { RecordFile } from "../domain/schemas.js";
import { handOverPending, lastAttemptDir } from "../folder/chain.js";
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
  /** For each folder waited for that is done, the last attempt of its chain: its folder and record. */
  records: { dir: string; record: RecordFile }[];
  /** The last attempt so far of each chain not done yet. */
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
  const done = new Map<string, { dir: string; record: RecordFile }>();
  // Each folder waited for stands for its chain: followed to its last attempt at every look.
  const last = new Map<string, string>(dirs.map((d) => [d, d]));
  const lastOf = (dir: string) => last.get(dir) ?? dir;
  const finished = await waitUntil(
    async () => {
      // Waiting through the queue: each look promotes what can start, so a queue whose supervisors all died
      // still moves while someone waits on it.
      for (const dir of oneDirPerRun(dirs.filter((d) => !done.has(d)).map(lastOf))) await promoteRunOf(dir);
      for (const dir of dirs) {
        if (done.has(dir)) continue;
        const current = lastAttemptDir(lastOf(dir));
        last.set(dir, current);
        let view = inspectDispatch(current);
        view = await settleIfDead(view);
        if (view.record !== null) {
          // Its chain goes on: the hand-over is promotion's work, done here if nobody has done it yet.
          if (handOverPending(current, view.record)) await promoteRunOf(current, { force: true });
          else done.set(dir, { dir: current, record: view.record });
        }
        // Recorded, but record.json is torn or newer: it will never become readable by waiting.
        else if (view.state === "recorded") throw recordProblem(view);
      }
      return (options.any ? done.size > 0 : done.size === dirs.length) ? true : undefined;
    },
    {
      clock,
      deadline: options.timeoutMs === null ? Number.POSITIVE_INFINITY : clock.now() + options.timeoutMs,
      pollMs: WAIT_FALLBACK_POLL_MS,
      watch: watchFolders(dirs, [FILES.record, FILES.next]),
    },
  );
  return {
    records: dirs.flatMap((d) => done.get(d) ?? []),
    pending: dirs.filter((d) => !done.has(d)).map(lastOf),
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
