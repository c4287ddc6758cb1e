import * as os from "node:os";
import type { PlacementFile } from "../src/domain/schemas.js";
import { type EngineEnding, noticeEnding } from "../src/domain/slurm-states.js";
import { FILES, fileIn } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import { writeFolderJson } from "../src/folder/write.js";
import type { Clock } from "../src/infra/clock.js";
import { okValue } from "../src/infra/json-file.js";
import { waitUntil } from "../src/infra/wait-until.js";
import type { SupervisorDeps } from "./deps.js";
import type { SupervisorLog } from "./log.js";

// A supervisor an engine placed (specs/placement.md): its folder's placement.json names the job this very
// process runs in (SLURM_JOB_ID). A local supervisor started inside some Slurm job (an orchestrator's own
// allocation) is not placed: its job is not the dispatch's. Nothing here costs a local supervisor more
// than a look at its environment.

/** The placement of the dispatch in `dir` when this process is its job; else null. */
export function ownPlacement(dir: string): PlacementFile | null {
  const jobId = process.env.SLURM_JOB_ID;
  if (jobId === undefined || jobId === "") return null;
  const placement = okValue(readFolderJson(dir, FILES.placement));
  return placement?.engine === "slurm" && placement.jobId === jobId ? placement : null;
}

/** Fills in placement.json's `node` once the job runs; a write that fails is logged, never fatal. */
export function notePlacementNode(
  dir: string,
  placement: PlacementFile,
  deps: SupervisorDeps,
  log: SupervisorLog,
): void {
  const node = process.env.SLURMD_NODENAME || os.hostname();
  if (placement.node === node) return;
  const { schema: _schema, ...body } = placement;
  try {
    writeFolderJson(dir, FILES.placement, { ...body, node }, deps.files);
  } catch (error) {
    log("write-failed", { file: FILES.placement, message: (error as Error).message });
  }
}

/** How long the supervisor looks for slurmstepd's notice: it is written before the job's signals are sent. */
const NOTICE_WAIT_MS = 1000;
const NOTICE_POLL_MS = 50;

/**
 * How the engine is ending this supervisor's job, as slurmstepd's notice in the job's output says it
 * (`CANCELLED AT …`, `… DUE TO TIME LIMIT`): asked when the supervisor or its agent got a signal, before
 * the ending is recorded. The engine signals every process of the job, the agent too, which may die
 * before the supervisor acts: without this, a cancelled job's dispatch would be recorded as an agent that
 * failed on SIGTERM. Null when there is no notice of this job (the signal came from elsewhere). While
 * the job ends the controller says only COMPLETING: the notice is the engine's word on why.
 */
export async function endingOfOwnJob(
  dir: string,
  placement: PlacementFile,
  clock: Clock,
): Promise<EngineEnding | null> {
  const { engineNoticeIn } = await import("../src/infra/slurm/job-output.js");
  const notice = await waitUntil(
    () => {
      const found = engineNoticeIn(fileIn(dir, FILES.slurmOut));
      return found !== null && found.jobId === placement.jobId ? found : undefined;
    },
    { clock, deadline: clock.now() + NOTICE_WAIT_MS, pollMs: NOTICE_POLL_MS },
  );
  return notice === undefined ? null : noticeEnding(notice, true);
}
