import * as fs from "node:fs";
import { SUPERVISOR_LOCK_STALE_MS } from "../src/domain/state/supervisor-judgement.js";
import { FILES, fileIn } from "../src/folder/layout.js";
import { readSupervisorFile } from "../src/folder/supervisor-read.js";
import { hostIdentity } from "../src/infra/host-identity.js";
import { tryLock } from "../src/infra/lock.js";
import { isSameProcess } from "../src/infra/process-identity.js";
import type { SupervisorDeps } from "./deps.js";
import type { Origin } from "./finish.js";
import { checkDueIn, recordAfterCheck } from "./finish.js";
import { fileLog, type SupervisorLog } from "./log.js";
import { enterPhase } from "./phases.js";
import { superviseAdopted, superviseFirst } from "./supervise-agent.js";
import { nameThisProcess } from "./supervisor-file.js";
import { takeOver, takeOverCheck } from "./take-over.js";

// The supervisor's start (specs/supervisor.md, "Start"): it claims the folder — supervisor.lock, the checks
// that keep an agent from running twice, supervisor.json — then supervises. Everything is loaded before
// the claim: a standby loads while its dispatcher admits, so a later load would buy its dispatcher nothing
// (specs/performance.md, "Figures behind constants"). The agent's supervision is in supervise-agent.ts,
// adoption in take-over.ts.

export { SUPERVISOR_LOCK_STALE_MS };

/**
 * Supervises the dispatch in `dir` from start to record (specs/supervisor.md), or adopts it when its agent
 * was started by a supervisor that has died since. Returns the process exit code: 0 whenever the folder was
 * handled (even if the agent failed), or when another supervisor has it. `given`: a standby supervisor
 * was handed the folder by its dispatcher (its life begins in the phase `given`).
 */
export async function superviseDispatch(
  dir: string,
  deps: SupervisorDeps,
  interrupt: AbortSignal,
  { given = false }: { given?: boolean } = {},
): Promise<number> {
  const log = fileLog(fileIn(dir, FILES.supervisorLog), () => deps.clock.wallNow());
  if (given) enterPhase(log, dir, "given");
  if (fs.existsSync(fileIn(dir, FILES.exit))) return finishCheck(dir, deps, log);
  const procFile = fileIn(dir, FILES.proc);
  const release = await tryLock({
    lockPath: fileIn(dir, FILES.supervisorLock),
    staleMs: SUPERVISOR_LOCK_STALE_MS,
    onCompromised: (error) => log("lock-compromised", { message: error.message }),
  });
  if (release !== null && !fs.existsSync(procFile)) {
    try {
      const busy = await alreadyHandled(dir);
      if (busy !== null) {
        log("already-supervised", { pid: process.pid, why: busy });
        return 0;
      }
      const origin = nameThisSupervisor(dir, deps);
      enterPhase(log, dir, "claimed");
      await superviseFirst({ dir, deps, log, interrupt }, origin);
      return 0;
    } finally {
      await release().catch(() => {});
    }
  }
  // An agent already started is never started again: it is adopted (take-over.ts decides who adopts, under
  // adopt.lock), or left to its live supervisor. A lock refused by a live supervisor ends here; a dead
  // one's lock looks fresh for up to its stale time, so a refusal alone does not say the holder lives.
  if (release !== null) await release().catch(() => {});
  else if (!fs.existsSync(procFile) || (await liveSupervisor(dir)) !== null) {
    log("already-supervised", { pid: process.pid });
    return 0;
  }
  return adopt(dir, deps, log, interrupt);
}

/** Takes the dispatch over when take-over.ts says this supervisor is the one to; else leaves it. */
async function adopt(
  dir: string,
  deps: SupervisorDeps,
  log: SupervisorLog,
  interrupt: AbortSignal,
): Promise<number> {
  const adoption = await takeOver(dir, deps, log, SUPERVISOR_LOCK_STALE_MS);
  if (adoption === null) return 0;
  enterPhase(log, dir, "adopted");
  try {
    await superviseAdopted({ dir, deps, log, interrupt }, adoption);
  } finally {
    await adoption.release().catch(() => {});
  }
  return 0;
}

/**
 * A folder whose agent has ended (exit.json): a check still due whose supervisor died is taken over — run,
 * or its run waited for — and the dispatch recorded (specs/supervisor.md, "Adoption"); anything else is
 * not ours.
 */
async function finishCheck(dir: string, deps: SupervisorDeps, log: SupervisorLog): Promise<number> {
  const release = await takeOverCheck(dir, deps, log, () => checkDueIn(dir));
  if (release === null) return 0;
  try {
    await recordAfterCheck(dir, deps, log);
  } finally {
    await release().catch(() => {});
  }
  return 0;
}

/**
 * Writes supervisor.json naming this process, the dispatch's first supervisor: from now on its dispatcher
 * may return, and readers judge the dispatch by this pid and start time. Returns when it started.
 */
function nameThisSupervisor(dir: string, { clock, files }: SupervisorDeps): Origin {
  const origin: Origin = { wall: clock.wallNow(), mono: clock.now() };
  const mono = { bootId: hostIdentity().bootId, ms: origin.mono };
  nameThisProcess(
    dir,
    {
      startedAt: origin.wall,
      startedMono: mono,
      adoptions: 0,
      firstStartedAt: origin.wall.toISOString(),
      firstStartedMono: mono,
    },
    files,
  );
  return origin;
}

/**
 * The pid of the live supervisor supervisor.json names (by pid and start time), if it is not this one.
 */
async function liveSupervisor(dir: string): Promise<number | null> {
  if (!fs.existsSync(fileIn(dir, FILES.supervisor))) return null;
  const sup = readSupervisorFile(dir);
  return sup.kind === "ok" &&
    sup.value.pid !== process.pid &&
    isSameProcess(sup.value.pid, sup.value.startTime)
    ? sup.value.pid
    : null;
}

/**
 * A folder whose agent was already started (proc.json), ended (exit.json), or whose supervisor.json
 * names another live supervisor is not ours to start: a lock taken over from a frozen supervisor must not
 * run the agent a second time.
 */
async function alreadyHandled(dir: string): Promise<string | null> {
  if (fs.existsSync(fileIn(dir, FILES.exit))) return "exit.json exists";
  if (fs.existsSync(fileIn(dir, FILES.proc))) return "proc.json exists";
  const live = await liveSupervisor(dir);
  return live === null ? null : `supervisor ${live} is alive`;
}
