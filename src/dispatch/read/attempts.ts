import * as path from "node:path";
import type { NextFile } from "../../domain/schemas.js";
import { attemptDirs, readNext } from "../../folder/chain.js";
import { FILES } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { okValue } from "../../infra/json-file.js";
import type { EarlierAttempt } from "./rows.js";

// A chain's attempts (specs/dispatch.md §8) as `result` lists them. Reading only.

/** One attempt of a chain: how it ended (as `status` shows it), where, on what model. */
export interface AttemptSummary extends EarlierAttempt {
  dir: string;
  model: string | null;
}

/** Every attempt of the chain `dir` belongs to, first to last, each from its admit.json and record.json. */
export function chainAttempts(dir: string): AttemptSummary[] {
  return attemptDirs(dir).map(attemptSummary);
}

function attemptSummary(dir: string): AttemptSummary {
  const admit = okValue(readFolderJson(dir, FILES.admit));
  const record = okValue(readFolderJson(dir, FILES.record));
  return {
    attempt: admit?.attempt ?? record?.attempt ?? 1,
    dispatchId: admit?.dispatchId ?? record?.dispatchId ?? path.basename(dir),
    dir,
    backend: record?.backend ?? admit?.backend ?? null,
    model: record?.model ?? admit?.model ?? null,
    status: record?.status ?? null,
    kind: record?.error?.kind ?? null,
  };
}

/** Why a chain stopped before the rung its last record named (next.json), or null: it did not stop so. */
export function chainStop(dir: string): Pick<NextFile, "stopped" | "message"> | null {
  const next = readNext(dir);
  return next === null || next.stopped === null ? null : { stopped: next.stopped, message: next.message };
}
