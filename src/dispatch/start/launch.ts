import * as fs from "node:fs";
import * as path from "node:path";
import { CatherdError } from "../../domain/errors.js";
import type { EngineName } from "../../domain/vocab.js";
import type { Submitted } from "../../engines/engine.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { type Clock, systemClock } from "../../infra/clock.js";
import { okValue } from "../../infra/json-file.js";
import { cpuTicksOf } from "../../infra/process-identity.js";
import { programFile } from "../../infra/programs.js";
import { waitUntil, watchFolders } from "../../infra/wait-until.js";
import { recordStartFailure } from "../settle/settle.js";
import { giveFolder, moveOutputOf, type StandbySupervisor, startGivenSupervisor } from "./standby.js";

/**
 * How long `dispatch` waits for the supervisor to show it is alive without it making any progress (CPU
 * time): a supervisor that is merely slow on a loaded machine is waited for, up to the cap.
 */
export const SUPERVISOR_START_TIMEOUT_MS = 10_000;
/** However slowly it progresses, the supervisor must be up within this long. */
export const SUPERVISOR_START_CAP_MS = 60_000;
const START_POLL_FIRST_MS = 3;
const START_POLL_GROWTH = 1.25;
const START_POLL_MAX_MS = 50;

/** The supervisor program, bundled or compiled (see programFile). */
export function supervisorProgram(): string {
  return programFile("supervisor", import.meta.url);
}

/** A supervisor started: a local process, or what an engine took (start/submit.ts). */
export type Launched = { placement: "local"; pid: number } | ({ placement: EngineName } & Submitted);

/**
 * Starts the supervisor of `dir` where its placement says (admit.json `placement`, specs/placement.md):
 * submitted as an engine's job — the engine's code loaded only then — or started here as `startLocal`
 * does. A standby is used only for a local one.
 */
export async function launchSupervisor(
  dir: string,
  options: { program?: string; standby?: StandbySupervisor | null; clock?: Clock } = {},
): Promise<Launched> {
  const placement = okValue(readFolderJson(dir, FILES.admit))?.placement;
  if (placement === undefined) return { placement: "local", pid: await startLocal(dir, options) };
  const { submitSupervisor } = await import("./submit-to-engine.js");
  const program = options.program ?? supervisorProgram();
  const submitted = await submitSupervisor(
    dir,
    placement,
    [process.execPath, program, dir],
    options.clock ?? systemClock,
  );
  return { placement: placement.engine, ...submitted };
}

/**
 * Hands `dir` to the standby supervisor already loaded, or to one started now (standby.ts) — detached in its
 * own session (it outlives the dispatcher), with its own stdout/stderr in supervisor.out — and waits until
 * supervisor.json names it. If it does not come up, the dispatch is recorded `lost` with the reason and
 * E_SUPERVISOR_START is thrown: never a folder that looks alive and is not.
 */
async function startLocal(
  dir: string,
  {
    program = supervisorProgram(),
    standby = null,
    clock = systemClock,
  }: { program?: string; standby?: StandbySupervisor | null; clock?: Clock },
): Promise<number> {
  const started =
    standby !== null && (await giveFolder(standby, dir)) ? standby : startGivenSupervisor(dir, { program });
  const { child, ended } = started;
  const spawnError = await started.spawned;
  const pid = child.pid;
  if (spawnError === null && pid !== undefined) {
    const named = await untilNamed(dir, pid, ended, clock);
    if (named) {
      child.unref();
      return pid;
    }
  }
  moveOutputOf(started, dir);
  const exited = ended();
  const why =
    spawnError !== null
      ? `the supervisor could not be started: ${spawnError.message}`
      : exited !== null
        ? `the supervisor ended (${exited}) before it was ready: ${tail(fileIn(dir, FILES.supervisorOut))}`
        : `the supervisor did not come up (no progress for ${SUPERVISOR_START_TIMEOUT_MS} ms, or not up within ${SUPERVISOR_START_CAP_MS} ms)`;
  if (pid !== undefined && exited === null) child.kill("SIGKILL");
  child.unref();
  await recordStartFailure(dir, why, clock);
  throw new CatherdError("E_SUPERVISOR_START", `${why} (dispatch ${path.basename(dir)} recorded as lost)`, {
    fix: `see ${fileIn(dir, FILES.supervisorOut)} and ${fileIn(dir, FILES.supervisorLog)}, then dispatch again`,
  });
}

/**
 * Waits until supervisor.json names `pid`: true. False when the supervisor ended without naming itself,
 * or made no progress (CPU time) for SUPERVISOR_START_TIMEOUT_MS, or was not up within the cap.
 */
async function untilNamed(
  dir: string,
  pid: number,
  ended: () => string | null,
  clock: Clock,
): Promise<boolean> {
  const started = clock.now();
  let ticks = cpuTicksOf(pid);
  let progressAt = started;
  const named = await waitUntil(
    () => {
      // Whether it has ended is noted before supervisor.json is read: a supervisor whose agent ends at
      // once may name itself, finish and exit between two checks, and that is a success.
      const gone = ended() !== null;
      const read = fs.existsSync(fileIn(dir, FILES.supervisor))
        ? readFolderJson(dir, FILES.supervisor)
        : null;
      if (read?.kind === "ok" && read.value.pid === pid) return true;
      if (gone) return false;
      const now = clock.now();
      const used = cpuTicksOf(pid);
      if (used !== null && used !== ticks) {
        ticks = used;
        progressAt = now;
      }
      return now - progressAt >= SUPERVISOR_START_TIMEOUT_MS ? false : undefined;
    },
    {
      clock,
      deadline: started + SUPERVISOR_START_CAP_MS,
      // supervisor.json appearing wakes the wait at once (inotify); the poll is the fallback, and also how
      // progress is checked. Quick at first (a supervisor is usually up within one node start-up), then
      // gentler: a hundred dispatchers polling every 3 ms would starve their supervisors (specs/performance.md,
      // "Figures behind constants").
      pollMs: (sleeps) => Math.min(START_POLL_FIRST_MS * START_POLL_GROWTH ** sleeps, START_POLL_MAX_MS),
      watch: watchFolders([dir], [FILES.supervisor]),
    },
  );
  return named ?? false;
}

function tail(file: string): string {
  try {
    const text = fs.readFileSync(file, "utf8").trim();
    return text === "" ? "it printed nothing" : text.slice(-400);
  } catch {
    return "it printed nothing";
  }
}
