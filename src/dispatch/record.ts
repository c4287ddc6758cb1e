import * as fs from "node:fs";
import * as path from "node:path";
import { backendFor } from "../backends/registry.js";
import type { Backend } from "../backends/types.js";
import {
  type AdmitFile,
  admitFileSchema,
  type ExitFile,
  exitFileSchema,
  type RecordFile,
  SCHEMA_VERSION,
  specFileSchema,
} from "../domain/schemas.js";
import { createJsonExclusive, writeFileAtomic } from "../infra/atomic.js";
import { changedBetween, gitSnapshot } from "../infra/git.js";
import { okValue, readJsonFile } from "../infra/json-file.js";
import { removeLiveMarkerOf } from "./live-index.js";
import { summarizeDispatch } from "./replay.js";

export interface RecordWriter {
  createJson(file: string, value: unknown): boolean;
}

/**
 * Writes record.json (and reply.md) from the folder's exit.json, admit.json and event stream. Created
 * exclusively: returns the record written, or null when one already existed (someone recorded it first).
 * Throws when exit.json is missing or unreadable: a record always follows an exit.
 */
export async function writeRecord(
  dir: string,
  writer: RecordWriter = { createJson: createJsonExclusive },
): Promise<RecordFile | null> {
  if (fs.existsSync(path.join(dir, "record.json"))) return null;
  const exitRead = readJsonFile(path.join(dir, "exit.json"), exitFileSchema);
  if (exitRead.kind !== "ok") {
    throw exitRead.kind === "missing" ? new Error(`${dir}/exit.json is missing`) : exitRead.error;
  }
  const exit = exitRead.value;
  const admit = okValue(readJsonFile(path.join(dir, "admit.json"), admitFileSchema));
  const spec = okValue(readJsonFile(path.join(dir, "spec.json"), specFileSchema));
  const backendId = admit?.backend ?? spec?.backend ?? "exec";
  const backend = backendFor(backendId);
  const record = await buildRecord(dir, exit, admit, backend, backendId, spec?.dispatchId);
  if (record.reply !== null) writeFileAtomic(path.join(dir, "reply.md"), record.reply);
  const created = writer.createJson(path.join(dir, "record.json"), record);
  removeLiveMarkerOf(dir);
  return created ? record : null;
}

async function buildRecord(
  dir: string,
  exit: ExitFile,
  admit: AdmitFile | null,
  backend: Backend,
  backendId: RecordFile["backend"],
  specDispatchId: string | undefined,
): Promise<RecordFile> {
  const summary = summarizeDispatch(dir, backend);
  const outcome = backend.finalize(summary, { reason: exit.reason, code: exit.code, signal: exit.signal });
  const status = exit.reason === "lost" ? "lost" : outcome.status;
  const reply = outcome.reply;
  return {
    schema: SCHEMA_VERSION,
    dispatchId: admit?.dispatchId ?? specDispatchId ?? path.basename(dir),
    run: admit?.run ?? null,
    name: admit?.name ?? null,
    backend: backendId,
    model: admit?.model ?? null,
    status,
    reason: exit.reason,
    exitCode: exit.code,
    signal: exit.signal,
    startedAt: exit.startedAt,
    endedAt: exit.endedAt,
    secs: exit.durationMs === null ? null : Math.round(exit.durationMs / 100) / 10,
    thread: exit.thread ?? summary.thread,
    tokens: outcome?.tokens ?? summary.tokens,
    costUsd: outcome?.costUsd ?? null,
    reply,
    replyPath: reply === null ? null : path.join(dir, "reply.md"),
    changedFiles: await changedFiles(admit),
    error: exit.error ?? (status === "ok" ? null : (outcome?.error ?? null)),
  };
}

/** Files changed in the dispatch's git tree since admission; null when unknown (never a fake "none"). */
async function changedFiles(admit: AdmitFile | null): Promise<string[] | null> {
  if (admit === null || admit.git === null) return null;
  const after = await gitSnapshot(admit.cwd);
  if (after === null) return null;
  return changedBetween(admit.git, after);
}
