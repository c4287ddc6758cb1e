import * as fs from "node:fs";
import type { ProcFile, SupervisorFile } from "../src/domain/schemas.js";
import { SUPERVISOR_LOCK_STALE_MS } from "../src/domain/state/supervisor-judgement.js";
import type { BootStamp } from "../src/domain/watch/boot-clock.js";
import { FILES, fileIn } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import { bootStamp, type Clock } from "../src/infra/clock.js";
import { type Release, tryLock } from "../src/infra/lock.js";
import { isSameProcess } from "../src/infra/process-identity.js";
import { waitUntil } from "../src/infra/wait-until.js";
import type { SupervisorDeps } from "./deps.js";
import type { SupervisorLog } from "./log.js";
import { nameThisProcess } from "./supervisor-file.js";

// Adoption (specs/supervisor.md, "Adoption"): a supervisor started on a folder whose agent was already
// started takes the dispatch over when the supervisor before it died and the agent runs on. However many
// supervisors race for it (every reader that finds the orphan starts one), adopt.lock lets one decide at a
// time, and supervisor.json, written before adopt.lock is let go, names the winner to all the others.

/** adopt.lock is held only for the take-over itself: a holder that died loses it this soon. */
export const ADOPT_LOCK_STALE_MS = 5000;
/** How long a take-over tries for supervisor.lock, and how often. */
const LOCK_TAKE_MS = 1000;
const LOCK_RETRY_MS = 50;

/** A dispatch this supervisor took over. */
export interface Adoption {
  /** supervisor.lock, now ours. */
  release: Release;
  /** The agent the supervisor before us started, known by its pid and start time. */
  proc: ProcFile & { startTime: string };
  /** How many supervisors took the dispatch over, this one included. */
  adoptions: number;
  /** When the dispatch's first supervisor started. */
  firstStartedAt: string;
  /** The same instant on the boot's monotonic clock; null when no supervisor before recorded it. */
  firstStartedMono: BootStamp | null;
}

/**
 * Takes over the folder when its supervisor is dead (by pid and start time), its agent alive (the same)
 * and it has no exit.json; else logs why not (`already-supervised`) and returns null. `lockStaleMs` is
 * the stale time of supervisor.lock, which the dead supervisor may still hold: it is removed and taken.
 */
export function takeOver(
  dir: string,
  deps: SupervisorDeps,
  log: SupervisorLog,
  lockStaleMs: number,
): Promise<Adoption | null> {
  return underAdoptLock(dir, log, async (bowOut) => {
    if (fs.existsSync(fileIn(dir, FILES.exit))) return bowOut("exit.json exists");
    const before = deadSupervisor(dir);
    if (before === "alive") return bowOut("its supervisor is alive");
    const procRead = readFolderJson(dir, FILES.proc);
    if (procRead.kind !== "ok") return bowOut(`proc.json is ${procRead.kind}`);
    const proc = procRead.value;
    // An agent whose start time could not be read cannot be told from a process that took its pid: it is
    // never signalled, so nobody may adopt it to stop it later.
    if (proc.startTime === null) return bowOut(`agent ${proc.pid} has no known start time`);
    if (!isSameProcess(proc.pid, proc.startTime)) return bowOut(`agent ${proc.pid} is gone`);
    const first = firstStart(before, proc, deps.clock.wallNow());
    const claimed = await claim({ dir, deps, log, lockStaleMs }, before, first);
    if (claimed === null) return bowOut("supervisor.lock is held");
    log("adopted", {
      pid: process.pid,
      agent: proc.pid,
      adoptions: claimed.adoptions,
      previous: before?.pid ?? null,
    });
    return {
      ...claimed,
      proc: { ...proc, startTime: proc.startTime },
      firstStartedAt: first.at,
      firstStartedMono: first.mono,
    };
  });
}

/**
 * Takes over a folder whose agent has ended (exit.json) but whose check (`--verify`) is still due, its
 * supervisor dead: the check is run, or its run waited for, and the dispatch recorded. Null (logged) when
 * it is not this supervisor's to do.
 */
export function takeOverCheck(
  dir: string,
  deps: SupervisorDeps,
  log: SupervisorLog,
  checkDue: () => boolean,
): Promise<Release | null> {
  return underAdoptLock(dir, log, async (bowOut) => {
    if (fs.existsSync(fileIn(dir, FILES.record))) return bowOut("record.json exists");
    if (!checkDue()) return bowOut("exit.json exists and no check is due");
    const before = deadSupervisor(dir);
    if (before === "alive") return bowOut("its supervisor is alive");
    const first = firstStart(before, null, deps.clock.wallNow());
    const claimed = await claim({ dir, deps, log, lockStaleMs: SUPERVISOR_LOCK_STALE_MS }, before, first);
    if (claimed === null) return bowOut("supervisor.lock is held");
    log("adopted", {
      pid: process.pid,
      agent: null,
      adoptions: claimed.adoptions,
      previous: before?.pid ?? null,
      for: "check",
    });
    return claimed.release;
  });
}

/** Decides under adopt.lock (one adopter at a time); `bowOut` logs why not and answers null. */
async function underAdoptLock<T>(
  dir: string,
  log: SupervisorLog,
  decide: (bowOut: (why: string) => null) => Promise<T | null>,
): Promise<T | null> {
  const bowOut = (why: string) => {
    log("already-supervised", { pid: process.pid, why });
    return null;
  };
  const adoptLock = await tryLock({ lockPath: fileIn(dir, FILES.adoptLock), staleMs: ADOPT_LOCK_STALE_MS });
  if (adoptLock === null) return bowOut("another supervisor is adopting the dispatch");
  try {
    return await decide(bowOut);
  } finally {
    await adoptLock().catch(() => {});
  }
}

/** supervisor.json of the supervisor before, when it is dead (null: none wrote one), or "alive". */
function deadSupervisor(dir: string): SupervisorFile | null | "alive" {
  const previous = readFolderJson(dir, FILES.supervisor);
  const before: SupervisorFile | null = previous.kind === "ok" ? previous.value : null;
  if (before !== null && before.pid !== process.pid && isSameProcess(before.pid, before.startTime))
    return "alive";
  return before;
}

/** Where a take-over claims the folder. */
interface Claiming {
  dir: string;
  deps: SupervisorDeps;
  log: SupervisorLog;
  lockStaleMs: number;
}

/** Takes supervisor.lock and writes supervisor.json naming this process (adoptions + 1); null: the lock is held. */
async function claim(
  { dir, deps, log, lockStaleMs }: Claiming,
  before: SupervisorFile | null,
  first: { at: string; mono: BootStamp | null },
): Promise<{ release: Release; adoptions: number } | null> {
  const release = await takeSupervisorLock(dir, log, lockStaleMs, deps.clock);
  if (release === null) return null;
  const adoptions = (before?.adoptions ?? 0) + 1;
  try {
    nameThisProcess(
      dir,
      {
        startedAt: deps.clock.wallNow(),
        startedMono: bootStamp(deps.clock),
        adoptions,
        firstStartedAt: first.at,
        firstStartedMono: first.mono,
      },
      deps.files,
    );
  } catch (error) {
    await release().catch(() => {});
    throw error;
  }
  return { release, adoptions };
}

/**
 * When the dispatch's first supervisor started, on both clocks, from the supervisor.json before (the
 * first one's own start when it was the first), else the agent's start (a folder whose first supervisor
 * recorded neither), else `now`. Each wall time is taken with the boot reading of the same instant, or none.
 */
function firstStart(
  before: SupervisorFile | null,
  proc: ProcFile | null,
  now: Date,
): { at: string; mono: BootStamp | null } {
  if (before?.firstStartedAt !== undefined) {
    return { at: before.firstStartedAt, mono: before.firstStartedMono ?? null };
  }
  if (before !== null) return { at: before.startedAt, mono: before.startedMono ?? null };
  if (proc !== null) return { at: proc.startedAt, mono: proc.startedMono ?? null };
  return { at: now.toISOString(), mono: null };
}

/**
 * supervisor.lock of a dead supervisor stays fresh-looking for up to its stale time: it is removed, then
 * taken. A fresh supervisor may take it in between; it gives it back at once on seeing proc.json.
 */
async function takeSupervisorLock(
  dir: string,
  log: SupervisorLog,
  staleMs: number,
  clock: Clock,
): Promise<Release | null> {
  const lockPath = fileIn(dir, FILES.supervisorLock);
  const taken = await waitUntil(
    async () => {
      fs.rmSync(lockPath, { recursive: true, force: true });
      const release = await tryLock({
        lockPath,
        staleMs,
        onCompromised: (error) => log("lock-compromised", { message: error.message }),
      });
      return release ?? undefined;
    },
    { clock, deadline: clock.now() + LOCK_TAKE_MS, pollMs: LOCK_RETRY_MS },
  );
  return taken ?? null;
}
