import * as fs from "node:fs";
import { CatherdError } from "../domain/errors.js";
import type { RecordFile } from "../domain/schemas.js";
import { FILES, fileIn } from "../folder/layout.js";
import { inspectDispatch } from "./inspect.js";
import { settleIfDead } from "./settle.js";

/** How often waiting looks again when no file event came (fs.watch can miss events on some systems). */
export const WAIT_FALLBACK_POLL_MS = 500;

export interface AwaitResult {
  records: { dir: string; record: RecordFile }[];
  pending: string[];
  timedOut: boolean;
}

/**
 * Waits until every folder (or, with `any`, the first) has a record. Wakes on file changes in the folders
 * (fs.watch), with a slow poll as a fallback; a dispatch found dead meanwhile is recorded `lost`.
 */
export async function awaitRecords(
  dirs: readonly string[],
  options: { any: boolean; timeoutMs: number | null },
): Promise<AwaitResult> {
  const deadline = options.timeoutMs === null ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
  const done = new Map<string, RecordFile>();
  let wake: (() => void) | null = null;
  const watchers = dirs.map((dir) => {
    try {
      return fs.watch(dir, () => wake?.());
    } catch {
      return null; // the fallback poll covers it
    }
  });
  try {
    for (;;) {
      for (const dir of dirs) {
        if (done.has(dir)) continue;
        let view = inspectDispatch(dir);
        view = await settleIfDead(view);
        if (view.record !== null) done.set(dir, view.record);
        // Recorded, but record.json is torn or newer: it will never become readable by waiting.
        else if (view.state === "recorded") throw recordProblem(view.dir, view.problems);
      }
      const finished = options.any ? done.size > 0 : done.size === dirs.length;
      const timedOut = !finished && Date.now() >= deadline;
      if (finished || timedOut) {
        return {
          records: dirs
            .filter((d) => done.has(d))
            .map((dir) => ({ dir, record: done.get(dir) as RecordFile })),
          pending: dirs.filter((d) => !done.has(d)),
          timedOut,
        };
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(
          resolve,
          Math.min(WAIT_FALLBACK_POLL_MS, Math.max(0, deadline - Date.now())),
        );
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  } finally {
    for (const watcher of watchers) watcher?.close();
  }
}

function recordProblem(dir: string, problems: readonly CatherdError[]): CatherdError {
  return (
    problems.find((p) => p.message.includes(FILES.record)) ??
    new CatherdError("E_FILE_CORRUPT", `${fileIn(dir, FILES.record)} cannot be read`, {
      fix: `inspect it with: cat ${fileIn(dir, FILES.record)}`,
    })
  );
}
