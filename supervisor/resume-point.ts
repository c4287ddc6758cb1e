import * as fs from "node:fs";
import type { ProcFile } from "../src/domain/schemas.js";
import { ageOfWrite, type Elapsed, elapsedSince, wallShiftSince } from "../src/domain/watch/boot-clock.js";
import { FILES, fileIn } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import { bootStamp, type Clock } from "../src/infra/clock.js";

/**
 * Where an adopting supervisor's watch starts (specs/supervisor.md, "Adoption"). It rereads events.jsonl
 * and stderr.log from the start: the agent wrote them while nobody watched, so nothing was lost, and open
 * tool calls, retries, thread and tokens come out as if it had watched all along. The lines carry no time
 * of their own: they are dated when the agent last wrote (the later mtime of the two files), so the quiet
 * clock runs from the last line, not from the adoption; the wall counts from the agent's start, by the
 * time elapsed on the boot's monotonic clock (src/domain/watch/boot-clock.ts): a jump of the wall clock since
 * neither fires nor postpones it.
 */
export interface Resume {
  /** The agent's start, on this supervisor's monotonic clock. */
  startedAt: number;
  /** The same instant on the wall clock (ms since the epoch), for the timestamps it writes. */
  startedAtWall: number;
  /** How the time since the agent's start was measured: the boot's clock, or the wall clock and why. */
  sinceStart: Elapsed;
  /** When the agent last wrote, on the monotonic clock: the time the lines read at adoption are dated. */
  linesAt: number;
  /** stall.json was written already: the notice is not given twice. */
  stalled: boolean;
  /** The thread thread.json names already. */
  thread: string | null;
  /** What activity.json says the dispatch waited for heavy slots in the waits that were over. */
  slotWaitedMs: number;
}

/** The resume point of the folder whose agent proc.json names (its start, on the wall and boot clocks). */
export function resumePoint(
  dir: string,
  agent: Pick<ProcFile, "startedAt" | "startedMono">,
  clock: Clock,
): Resume {
  const now = clock.now();
  const wallNow = clock.wallNow().getTime();
  const parsed = Date.parse(agent.startedAt);
  const recorded = { wallMs: Number.isFinite(parsed) ? parsed : wallNow, boot: agent.startedMono ?? null };
  const reading = { wallMs: wallNow, boot: bootStamp(clock) };
  const sinceStart = elapsedSince(recorded, reading);
  const startedAt = now - sinceStart.ms;
  // Timestamps keep the start as it was written, placed by the same elapsed time: never after now.
  const startedAtWall = sinceStart.clock === "boot" ? recorded.wallMs : wallNow - sinceStart.ms;
  const wroteAt = Math.max(mtimeOf(fileIn(dir, FILES.events)), mtimeOf(fileIn(dir, FILES.stderr)));
  const shift = wallShiftSince(recorded, reading) ?? 0;
  // No file yet, or one touched before the start: never before the start, never ahead of now.
  const linesAt = Math.min(now, Math.max(startedAt, now - ageOfWrite(wroteAt, wallNow, shift)));
  const thread = readFolderJson(dir, FILES.thread);
  const activity = readFolderJson(dir, FILES.activity);
  return {
    startedAt,
    startedAtWall,
    sinceStart,
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
