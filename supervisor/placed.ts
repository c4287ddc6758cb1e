import * as fs from "node:fs";
import type { PlacementFile } from "../src/domain/schemas.js";
import type { Engine, EngineEnding } from "../src/engines/engine.js";
import { engineNamed } from "../src/engines/engine-registry.js";
import { FILES, fileIn } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import { writeFolderJson } from "../src/folder/write.js";
import type { Clock } from "../src/infra/clock.js";
import { okValue } from "../src/infra/json-file.js";
import type { SupervisorDeps } from "./deps.js";
import type { SupervisorLog } from "./log.js";

// A supervisor an engine placed (specs/placement.md): its folder's placement.json names what the engine
// took, and the engine says whether that is this very process. A local supervisor started inside some
// engine's job (an orchestrator's own allocation) is not placed: its job is not the dispatch's. A local
// dispatch's folder has no placement.json: nothing here costs its supervisor more than that look.

/** This supervisor as its engine placed it. */
export interface OwnPlacement {
  placement: PlacementFile;
  engine: Engine;
}

/** The placement of the dispatch in `dir` when this process is what its engine took; else null. */
export async function ownPlacement(dir: string): Promise<OwnPlacement | null> {
  if (!fs.existsSync(fileIn(dir, FILES.placement))) return null;
  const placement = okValue(readFolderJson(dir, FILES.placement));
  if (placement === null) return null;
  const engine = await engineNamed(placement.engine);
  return engine.isThisProcess(placement) ? { placement, engine } : null;
}

/** Fills in placement.json's `node` once the job runs; a write that fails is logged, never fatal. */
export function notePlacementNode(
  dir: string,
  { placement, engine }: OwnPlacement,
  deps: SupervisorDeps,
  log: SupervisorLog,
): void {
  const node = engine.nodeOfThisProcess();
  if (placement.node === node) return;
  const { schema: _schema, ...body } = placement;
  try {
    writeFolderJson(dir, FILES.placement, { ...body, node }, deps.files);
  } catch (error) {
    log("write-failed", { file: FILES.placement, message: (error as Error).message });
  }
}

/**
 * How the engine is ending this supervisor, in its words: asked when the supervisor or its agent got a
 * signal, before the ending is recorded. The engine may signal every process it placed, the agent too,
 * which may die before the supervisor acts: without this, a cancelled job's dispatch would be recorded as
 * an agent that failed on SIGTERM. Null when the engine is not ending it (the signal came from elsewhere).
 */
export function endingOfOwnJob(dir: string, own: OwnPlacement, clock: Clock): Promise<EngineEnding | null> {
  return own.engine.endingOfThisProcess(dir, own.placement, clock);
}
