import * as fs from "node:fs";
import * as path from "node:path";
import { isValidId } from "../src/domain/ids.js";
import { FILES, fileIn, runOf } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import type { Clock } from "../src/infra/clock.js";
import { okValue } from "../src/infra/json-file.js";
import { findLeftovers, stopLeftovers } from "../src/infra/leftovers.js";
import type { SupervisorLog } from "./log.js";

// Before a follow-up's agent starts (specs/dispatch.md, "Following up"): whatever the turn it continues
// left running is stopped, so that the resumed CLI never dies of a leftover of its own earlier turn (a
// server it started still holding a port, a watcher killing its new tools: exit 143).

/** How long a leftover gets between SIGTERM and SIGKILL: a follow-up's start waits no longer. */
const LEFTOVER_GRACE_MS = 2000;
/** Room around the turn's window for a start time counted in 10 ms ticks and a wall clock read beside it. */
const TICK_SLACK_MS = 250;

/**
 * Stops what the turn named by this folder's admit.json `followUpOf` left running — the processes
 * carrying its CATHERD_DISPATCH, and those in its private worktree that started while it ran — and writes
 * one supervisor.log line naming each (`previous-turn-stopped`). Nothing to do for a dispatch that
 * follows up nothing. Never throws: a leftover it cannot stop is the follow-up's risk, not a reason to
 * keep the agent from starting.
 */
export async function stopPreviousTurn(dir: string, log: SupervisorLog, clock: Clock): Promise<void> {
  const of = okValue(readFolderJson(dir, FILES.admit))?.followUpOf;
  if (of === undefined || !isValidId(of)) return;
  try {
    const turn = path.join(path.dirname(dir), of);
    const leftovers = findLeftovers({
      dispatchId: of,
      worktree: privateWorktreeOf(turn),
      startedWithin: whileItRan(turn),
    });
    if (leftovers.length === 0) return;
    const stopped = await stopLeftovers(leftovers, LEFTOVER_GRACE_MS, clock);
    log("previous-turn-stopped", {
      of,
      processes: stopped.map(({ pid, startTime, why, command }) => ({ pid, startTime, why, command })),
    });
  } catch (error) {
    log("previous-turn-unstopped", { of, message: error instanceof Error ? error.message : String(error) });
  }
}

/** The earlier turn's worktree when catherd made it for the conversation (under the run's worktrees/). */
function privateWorktreeOf(turn: string): string | null {
  const plan = okValue(readFolderJson(turn, FILES.spec))?.worktree ?? null;
  const run = runOf(turn);
  if (plan == null || run === null) return null;
  const inRun = path.dirname(plan.path) === run.worktrees && isValidId(path.basename(plan.path));
  return inRun ? plan.path : null;
}

/**
 * From the earlier turn's agent's start to the end of its stop (exit.json is written once the stop has
 * swept), in ms since boot; null when either is unknown. The end is measured on the wall clock from the
 * agent's start (proc.json names the same instant both ways), with a quarter second for the tick.
 */
function whileItRan(turn: string): { fromMs: number; toMs: number } | null {
  const proc = okValue(readFolderJson(turn, FILES.proc));
  const exitWritten = fs.statSync(fileIn(turn, FILES.exit), { throwIfNoEntry: false })?.mtimeMs;
  const startTicks = Number(proc?.startTime);
  const startedAt = Date.parse(proc?.startedAt ?? "");
  if (exitWritten === undefined || !Number.isFinite(startTicks) || !Number.isFinite(startedAt)) return null;
  const fromMs = startTicks * 10; // USER_HZ is 100: a tick is 10 ms
  return { fromMs, toMs: fromMs + Math.max(0, exitWritten - startedAt) + TICK_SLACK_MS };
}
