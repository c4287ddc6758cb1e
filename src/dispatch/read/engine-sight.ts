import * as fs from "node:fs";
import type { PlacementFile } from "../../domain/schemas.js";
import { hostRelation } from "../../domain/state/host.js";
import { SUPERVISOR_LOCK_STALE_MS } from "../../domain/state/supervisor-judgement.js";
import type { EngineName } from "../../domain/vocab.js";
import type { EngineEnding, EngineSight } from "../../engines/engine.js";
import { engineNamed } from "../../engines/engine-registry.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import type { Clock } from "../../infra/clock.js";
import { hostIdentity } from "../../infra/host-identity.js";
import { okValue } from "../../infra/json-file.js";
import { sightOfLock } from "../../infra/lock-sight.js";
import { isSameProcess } from "../../infra/process-identity.js";

// What the engines say of the supervisors they placed (specs/placement.md, "Reading a job"), asked by the
// reader gate *before* it inspects their folders: a placed supervisor writes supervisor.json, exit.json and
// record.json, so the engine, like every process, is looked at before the files it would write. A job the
// engine says ended has written all it ever will. Asked only where it can change the verdict — the
// supervisor has not come up, or is dead by its pid here, or its lock is stale — and in one call per
// engine for all of them; an engine's code is loaded only then.

/** Sights by dispatch folder: a folder without one was not asked about. */
export type EngineSights = ReadonlyMap<string, EngineSight>;

/** The placement of a folder whose engine the reader must ask about it, else null. */
function placementToAsk(dir: string, nowMs: number): PlacementFile | null {
  if (fs.existsSync(fileIn(dir, FILES.record))) return null;
  const placement = okValue(readFolderJson(dir, FILES.placement));
  if (placement === null) return null;
  const supervisor = okValue(readFolderJson(dir, FILES.supervisor));
  if (supervisor === null) return placement;
  if (hostRelation(supervisor.host, hostIdentity()) === "same") {
    return isSameProcess(supervisor.pid, supervisor.startTime) ? null : placement;
  }
  const lock = sightOfLock(fileIn(dir, FILES.supervisorLock), nowMs);
  return lock.kind === "held" && lock.ageMs < SUPERVISOR_LOCK_STALE_MS ? null : placement;
}

/**
 * What the engines say of the supervisors of those of `dirs` that need asking (none: no call is made, and
 * no engine's code is loaded). Never throws: an engine that does not answer is `unreachable` for each.
 */
export async function engineSights(dirs: readonly string[], clock: Clock): Promise<Map<string, EngineSight>> {
  const nowMs = clock.wallNow().getTime();
  const byEngine = new Map<EngineName, Map<string, PlacementFile>>();
  for (const dir of dirs) {
    const placement = placementToAsk(dir, nowMs);
    if (placement === null) continue;
    const placed = byEngine.get(placement.engine) ?? new Map<string, PlacementFile>();
    byEngine.set(placement.engine, placed.set(dir, placement));
  }
  const answers = await Promise.all(
    [...byEngine].map(async ([name, placed]) => (await engineNamed(name)).sights(placed)),
  );
  return new Map(answers.flatMap((answer) => [...answer]));
}

/** The phase a sight saw; null when the engine did not answer. */
export function phaseOf(sight: EngineSight): "pending" | "running" | "ended" | null {
  return sight.kind === "unreachable" ? null : sight.phase;
}

/** The engine's words for a sight: what a verdict that rests on it quotes. */
export function wordsOf(sight: EngineSight): string {
  return sight.kind === "unreachable" ? sight.error.message : sight.words;
}

/**
 * How the engine ended a supervisor that left no record, as a record says it; null while the engine has
 * not ended it (or did not answer). `started`: its supervisor came up (supervisor.json).
 */
export function endingOfSight(sight: EngineSight | null, started: boolean): EngineEnding | null {
  if (sight === null || sight.kind === "unreachable") return null;
  return started ? sight.ending.started : sight.ending.unstarted;
}
