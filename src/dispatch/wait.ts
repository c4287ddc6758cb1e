import { CatherdError } from "../domain/errors.js";
import type { RecordFile } from "../domain/schemas.js";
import { handOverPending } from "../folder/chain.js";
import { FILES, fileIn } from "../folder/layout.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { waitUntil, watchFolders } from "../infra/wait-until.js";
import { type DispatchView, problemOf } from "./read/inspect.js";
import { readDispatches } from "./reader.js";

/**
 * How often waiting looks again when no record.json event came: fs.watch can miss events on some file
 * systems, and a dispatch that dies without a record sends none.
 */
export const WAIT_FALLBACK_POLL_MS = 500;

export interface AwaitResult {
  /** For each folder waited for that is done, the last attempt of its chain: its folder and record. */
  records: { dir: string; record: RecordFile }[];
  /** The last attempt so far of each chain not done yet, as the last look saw it. */
  pending: DispatchView[];
  timedOut: boolean;
}

/**
 * Waits until every folder (or, with `any`, the first) has ended: for a chain, its last attempt has a
 * record that hands over to nothing. Each look goes through the reader gate — it promotes the runs (so a
 * queue whose supervisors all died still moves while someone waits on it), follows each chain to its last
 * attempt (doing a due hand-over), and records a dispatch found dead. Woken when a record.json or
 * next.json appears (fs.watch), with a slow poll as a fallback.
 */
export async function awaitRecords(
  dirs: readonly string[],
  options: { any: boolean; timeoutMs: number | null; clock?: Clock },
): Promise<AwaitResult> {
  const clock = options.clock ?? systemClock;
  const done = new Map<string, { dir: string; record: RecordFile }>();
  const pending = new Map<string, DispatchView>();
  const finished = await waitUntil(
    async () => {
      const waiting = dirs.filter((d) => !done.has(d));
      const views = await readDispatches(waiting, { clock, chain: "last" });
      for (const [i, view] of views.entries()) {
        const dir = waiting[i] as string;
        if (view.record !== null && !handOverPending(view.dir, view.record)) {
          done.set(dir, { dir: view.dir, record: view.record });
          pending.delete(dir);
        }
        // Recorded, but record.json is torn, newer or unreadable (then the state is unknown): it will never
        // become readable by waiting.
        else if (view.record === null && view.state === "recorded") throw recordProblem(view);
        else if (view.state === "unknown" && problemOf(view, FILES.record) !== null)
          throw recordProblem(view);
        // Ended (lost, or exit.json without a record) and its record could not be written (the disk
        // refused it, or catherd's own error): waiting cannot change that, so the refusal is the answer.
        else if (view.record === null && ENDED.has(view.state) && unrecordable(view) !== null)
          throw unrecordable(view);
        else pending.set(dir, view);
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
    pending: dirs.flatMap((d) => pending.get(d) ?? []),
    timedOut: finished === undefined,
  };
}

/** The states of a dispatch whose supervisor is gone and whose record is a reader's to write. */
const ENDED: ReadonlySet<DispatchView["state"]> = new Set(["lost", "exited"]);

/** Why this dispatch's record could not be written (settle.ts), if the last look met that. */
function unrecordable(view: DispatchView): CatherdError | null {
  const record = fileIn(view.dir, FILES.record);
  return view.problems.find((p) => p.file === record) ?? null;
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
