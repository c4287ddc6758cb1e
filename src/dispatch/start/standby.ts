import * as fs from "node:fs";
import * as path from "node:path";
import { FILES, fileIn } from "../../folder/layout.js";
import { FILE_MODE } from "../../infra/atomic.js";
import { type Clock, systemClock } from "../../infra/clock.js";
import { startTimeOf } from "../../infra/process-identity.js";
import { programFile, STANDBY_FLAG, STANDBY_OUT_FILE } from "../../infra/programs.js";
import { type SupervisorProcess, startSupervisorProcess } from "./supervisor-process.js";

// A supervisor started before it has a folder, so that its node start-up and module loading overlap the
// dispatcher's own (validation, git, admission) on another core instead of following them. It waits on
// its stdin for one line, the folder to supervise, and until then writes nothing anywhere. The dispatcher
// is the only writer of that pipe: when it refuses, fails or dies, the pipe closes and the standby exits.
// (specs/dispatch.md, "The supervisor, detached".)

/** A standby supervisor, as its dispatcher sees it. */
export interface StandbySupervisor extends SupervisorProcess {
  /** Its stdout and stderr, until it is given a folder, which moves the file into the dispatch folder as supervisor.out. */
  outFile: string;
  /** It was given a folder: from then on it is that dispatch's supervisor, never dismissed. */
  given: boolean;
}

/**
 * Starts a standby supervisor, detached in its own session, its output in `<home>/.standby-<pid>-<time>.out`
 * (the home holds the runs: the file can be renamed into a dispatch folder). Returns null when it cannot be
 * set up — no home yet (the first dispatch creates it), not writable, the spawn failed — and dispatch then
 * starts one given its folder at once (`startGivenSupervisor`).
 */
export function startStandbySupervisor(
  home: string,
  {
    program = programFile("supervisor", import.meta.url),
    clock = systemClock,
  }: { program?: string; clock?: Clock } = {},
): StandbySupervisor | null {
  let outFd: number;
  // Unique by pid and time; "wx" refuses a clash rather than share a file (then: no standby).
  const outFile = path.join(home, `.standby-${process.pid}-${clock.wallNow().getTime().toString(36)}.out`);
  try {
    outFd = fs.openSync(outFile, "wx", FILE_MODE);
  } catch {
    return null;
  }
  let started: SupervisorProcess;
  try {
    started = startSupervisorProcess(program, [STANDBY_FLAG, outFile], { stdin: "pipe", outFd, cwd: home });
  } catch {
    fs.rmSync(outFile, { force: true });
    return null;
  }
  const { child } = started;
  // Neither the process nor the pipe keeps the dispatcher alive: when it exits, the pipe closes.
  child.unref();
  const stdin = child.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null;
  stdin?.unref?.();
  child.stdin?.on("error", () => {});
  removeLeftovers(home);
  return { ...started, outFile, given: false };
}

/**
 * Removes the output files of standbys whose dispatcher is gone: a standby removes its own file when its
 * pipe closes, so one is left only when both died abruptly (a machine that lost power). A file whose pid
 * is in use again is kept until that process ends: a few bytes, never a wrong removal.
 */
export function removeLeftovers(home: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(home);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = STANDBY_OUT_FILE.exec(name)?.[1];
    if (pid === undefined || startTimeOf(Number(pid)) !== null) continue;
    fs.rmSync(path.join(home, name), { force: true });
  }
}

/**
 * Starts a standby supervisor given the folder `dir` at once: the one way a supervisor is started locally
 * when no standby waits (none could be started, it cannot take the folder, the second and later
 * dispatches of one promotion, a reader's adoption). Its output is appended to `<dir>/supervisor.out`.
 * Throws only when node refuses to spawn at all.
 */
export function startGivenSupervisor(
  dir: string,
  { program = programFile("supervisor", import.meta.url) }: { program?: string } = {},
): StandbySupervisor {
  const outFile = fileIn(dir, FILES.supervisorOut);
  const outFd = fs.openSync(outFile, "a", FILE_MODE);
  // The folder rides on the command line: given from the exec on, with no write that a kill could miss.
  const started = startSupervisorProcess(program, [STANDBY_FLAG, outFile, dir], {
    stdin: "ignore",
    outFd,
    cwd: dir,
  });
  return { ...started, outFile, given: true };
}

/**
 * Gives the admitted folder to a standby supervisor: the folder's path down the pipe is the whole
 * hand-over (the standby moves its own output file to `<dir>/supervisor.out` once it reads it), so a
 * dispatcher killed at any moment has either given the folder or not. False (with the standby told to
 * go) when it cannot take it — it failed to start or has ended — and the caller starts another.
 */
export async function giveFolder(standby: StandbySupervisor, dir: string): Promise<boolean> {
  const startError = await standby.spawned;
  if (startError !== null || standby.ended() !== null || standby.child.stdin === null) {
    dismiss(standby);
    return false;
  }
  standby.given = true;
  standby.child.stdin.end(`${dir}\n`);
  return true;
}

/**
 * Moves what a standby that did not come up printed into `<dir>/supervisor.out`, where its dispatcher
 * reports it from: one that died before it read its folder could not move it itself.
 */
export function moveOutputOf(standby: StandbySupervisor, dir: string): void {
  const out = fileIn(dir, FILES.supervisorOut);
  if (standby.outFile === out || !fs.existsSync(standby.outFile)) return;
  try {
    fs.renameSync(standby.outFile, out);
  } catch {
    // the failure is reported without it
  }
}

/**
 * Tells a standby supervisor it will get no folder, and removes its output file now (not when it gets
 * around to it): a refused dispatch leaves nothing behind. Does nothing once it was given a folder.
 */
export function dismiss(standby: StandbySupervisor): void {
  if (standby.given) return;
  standby.child.stdin?.destroy();
  fs.rmSync(standby.outFile, { force: true });
}
