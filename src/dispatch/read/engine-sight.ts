import * as fs from "node:fs";
import type { CatherdError } from "../../domain/errors.js";
import { hostRelation } from "../../domain/host.js";
import type { PlacementFile } from "../../domain/schemas.js";
import type { SlurmJob, StepdNotice } from "../../domain/slurm-output.js";
import {
  type EngineEnding,
  engineEnding,
  forgottenEnding,
  jobPhase,
  noticeEnding,
} from "../../domain/slurm-states.js";
import { SUPERVISOR_LOCK_STALE_MS } from "../../domain/supervisor-judgement.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import type { Clock } from "../../infra/clock.js";
import { hostIdentity } from "../../infra/host-identity.js";
import { okValue } from "../../infra/json-file.js";
import { sightOfLock } from "../../infra/lock-sight.js";
import { isSameProcess } from "../../infra/process-identity.js";

// What the engine says of the jobs of placed dispatches (specs/placement.md, "Reading a job"), asked by
// the reader gate *before* it inspects their folders: the job's processes write supervisor.json, exit.json
// and record.json, so the engine, like every process, is looked at before the files it would write. A job
// the engine says ended has written all it ever will. Asked only where it can change the verdict — the
// supervisor has not come up, or is dead by its pid here, or its lock is stale — and in one `squeue` for
// all of them; the engine's code is loaded only then.

/** One reading of a placed dispatch's job. */
export type JobSight =
  | { kind: "job"; job: SlurmJob }
  /** The engine no longer knows it (purged, no accounting): what slurmstepd wrote in its output, if anything. */
  | { kind: "forgotten"; jobId: string; notice: StepdNotice | null }
  | { kind: "unreachable"; error: CatherdError };

/** Sights by dispatch folder: a folder without one was not asked about. */
export type EngineSights = ReadonlyMap<string, JobSight>;

/** The job of a folder whose placement.json names one, when the reader must ask the engine about it. */
function jobToAsk(dir: string, nowMs: number): string | null {
  if (fs.existsSync(fileIn(dir, FILES.record))) return null;
  const placement = okValue(readFolderJson(dir, FILES.placement));
  if (placement === null) return null;
  const supervisor = okValue(readFolderJson(dir, FILES.supervisor));
  if (supervisor === null) return placement.jobId;
  if (hostRelation(supervisor.host, hostIdentity()) === "same") {
    return isSameProcess(supervisor.pid, supervisor.startTime) ? null : placement.jobId;
  }
  const lock = sightOfLock(fileIn(dir, FILES.supervisorLock), nowMs);
  return lock.kind === "held" && lock.ageMs < SUPERVISOR_LOCK_STALE_MS ? null : placement.jobId;
}

/**
 * What the engine says of the jobs of those of `dirs` that need asking (none: no call is made, and no
 * engine code is loaded). Never throws: an engine that does not answer is `unreachable` for each.
 */
export async function engineSights(dirs: readonly string[], clock: Clock): Promise<Map<string, JobSight>> {
  const sights = new Map<string, JobSight>();
  const nowMs = clock.wallNow().getTime();
  const wanted = dirs.flatMap((dir) => {
    const jobId = jobToAsk(dir, nowMs);
    return jobId === null ? [] : [{ dir, jobId }];
  });
  if (wanted.length === 0) return sights;
  const [{ readJob, readJobs }, { engineNoticeIn }] = await Promise.all([
    import("../../infra/slurm/job.js"),
    import("../../infra/slurm/job-output.js"),
  ]);
  const known = await readJobs([...new Set(wanted.map((w) => w.jobId))]);
  for (const { dir, jobId } of wanted) {
    if (!(known instanceof Map)) {
      sights.set(dir, { kind: "unreachable", error: known.unreachable });
      continue;
    }
    const listed = known.get(jobId);
    // squeue does not say how a job ended (its exit, who cancelled it): an ended one is read in full.
    if (listed !== undefined && jobPhase(listed.state) !== "ended") {
      sights.set(dir, { kind: "job", job: listed });
      continue;
    }
    const reading = await readJob(jobId);
    sights.set(
      dir,
      reading.kind === "known"
        ? { kind: "job", job: reading.job }
        : reading.kind === "forgotten"
          ? { kind: "forgotten", jobId, notice: engineNoticeIn(fileIn(dir, FILES.slurmOut)) }
          : { kind: "unreachable", error: reading.error },
    );
  }
  return sights;
}

/** The phase of the job a sight saw: a forgotten job has ended; null when the engine did not answer. */
export function phaseOf(sight: JobSight): "pending" | "running" | "ended" | null {
  if (sight.kind === "unreachable") return null;
  return sight.kind === "forgotten" ? "ended" : jobPhase(sight.job.state);
}

/** The engine's words for a sight: what a verdict that rests on it quotes. */
export function wordsOf(sight: JobSight, placement: PlacementFile): string {
  if (sight.kind === "unreachable") return sight.error.message;
  if (sight.kind === "forgotten") {
    return sight.notice === null ? `slurm job ${sight.jobId} is forgotten` : `slurm: ${sight.notice.words}`;
  }
  return `slurm job ${placement.jobId} ${sight.job.state}${sight.job.reason === null ? "" : ` (${sight.job.reason})`}`;
}

/**
 * How the engine ended a job whose supervisor left no record, as a record says it; null while the engine
 * has not ended it (or did not answer). `started`: its supervisor came up (supervisor.json).
 */
export function endingOfSight(sight: JobSight | null, started: boolean): EngineEnding | null {
  if (sight === null || sight.kind === "unreachable") return null;
  if (sight.kind === "forgotten") {
    return sight.notice === null
      ? forgottenEnding(sight.jobId, started)
      : noticeEnding(sight.notice, started);
  }
  // A job pending again after its supervisor came up was requeued by hand: that supervisor is gone too.
  const phase = jobPhase(sight.job.state);
  return phase === "ended" || (phase === "pending" && started) ? engineEnding(sight.job, started) : null;
}
