import * as fs from "node:fs";
import { FILES, fileIn } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import type { Clock } from "../src/infra/clock.js";

/**
 * Where an adopting supervisor's watch starts (specs/supervisor.md, "Adoption"). It rereads events.jsonl
 * and stderr.log from the start: the agent wrote them while nobody watched, so nothing was lost, and open
 * tool calls, retries, thread and tokens come out as if it had watched all along. The lines carry no time
 * of their own: they are dated when the agent last wrote (the later mtime of the two files), so the quiet
 * clock runs from the last line, not from the adoption; the wall counts from the agent's start.
 */
export interface Resume {
  /** The agent's start, on this supervisor's monotonic clock. */
  startedAt: number;
  /** The same instant on the wall clock (ms since the epoch), for the timestamps it writes. */
  startedAtWall: number;
  /** When the agent last wrote, on the monotonic clock: the time the lines read at adoption are dated. */
  linesAt: number;
  /** stall.json was written already: the notice is not given twice. */
  stalled: boolean;
  /** The thread thread.json names already. */
  thread: string | null;
  /** What activity.json says the dispatch waited for heavy slots in the waits that were over. */
  slotWaitedMs: number;
}

/** The resume point of the folder whose agent started at `agentStartedAt` (proc.json's ISO time). */
export function resumePoint(dir: string, agentStartedAt: string, clock: Clock): Resume {
  const now = clock.now();
  const wallNow = clock.wallNow().getTime();
  const parsed = Date.parse(agentStartedAt);
  const startedAtWall = Number.isFinite(parsed) ? Math.min(parsed, wallNow) : wallNow;
  const monoOf = (wallMs: number) => now - (wallNow - wallMs);
  const startedAt = monoOf(startedAtWall);
  const wroteAt = Math.max(mtimeOf(fileIn(dir, FILES.events)), mtimeOf(fileIn(dir, FILES.stderr)));
  // A clock stepped back, or a file touched before the start: never before the start, never ahead of now.
  const linesAt = Math.min(now, Math.max(startedAt, monoOf(wroteAt)));
  const thread = readFolderJson(dir, FILES.thread);
  const activity = readFolderJson(dir, FILES.activity);
  return {
    startedAt,
    startedAtWall,
    linesAt,
    stalled: fs.existsSync(fileIn(dir, FILES.stall)),
    thread: thread.kind === "ok" ? thread.value.thread : null,
    slotWaitedMs: activity.kind === "ok" ? (activity.value.slotWaitMs ?? 0) : 0,
  };
}

function mtimeOf(file: string): number {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return Number.NEGATIVE_INFINITY;
  }
}
