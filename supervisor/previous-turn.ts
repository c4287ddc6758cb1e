import * as path from "node:path";
import { isValidId } from "../src/domain/ids.js";
import { FILES, runOf } from "../src/folder/layout.js";
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
/** Room past the earlier turn's end for what its stop was still ending (its kill grace comes on top). */
const END_SLACK_MS = 5000;

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

/** From the earlier turn's agent's start to its end, in ms since boot; null when either is unknown. */
function whileItRan(turn: string): { fromMs: number; toMs: number } | null {
  const proc = okValue(readFolderJson(turn, FILES.proc));
  const exit = okValue(readFolderJson(turn, FILES.exit));
  const spec = okValue(readFolderJson(turn, FILES.spec));
  const startTicks = Number(proc?.startTime);
  if (proc === null || exit === null || exit.durationMs === null || !Number.isFinite(startTicks)) return null;
  const fromMs = startTicks * 10; // USER_HZ 100: a tick is 10 ms
  return { fromMs, toMs: fromMs + exit.durationMs + (spec?.killGraceMs ?? 10_000) + END_SLACK_MS };
}
