import { judgeEnding } from "../domain/ending/ending.js";
import { asCatherdError } from "../domain/errors.js";
import {
  type AdmitFile,
  type ExitFile,
  type RecordFile,
  SCHEMA_VERSION,
  type SpecFile,
} from "../domain/schemas.js";

// The record of a dispatch whose record catherd could not build (specs/record.md, "A record always
// comes"): an error of catherd's own while it read the folder and judged it must not leave the dispatch
// without a verdict — `exited` forever for `status`, kept forever by `clean`, a waiter that never returns.

/**
 * Whether a throw while building a record is the disk's: a write the operating system refused (full,
 * read-only, no permission). Those are left for a later reader, who may find room; every other throw is
 * recorded at once by unbuiltRecord.
 */
export function isDiskRefusal(error: unknown): boolean {
  return asCatherdError(error).code === "E_IO_WRITE";
}

/**
 * A record from exit.json alone, for a dispatch whose record could not be built: `failed`, kind `record`,
 * code E_INTERNAL, the error's words, and how the agent ended as exit.json says (the verdict is
 * src/domain/ending/ending.ts's). Nothing else of the folder is read (any of it may be what failed): no reply, no
 * changes, no usage.
 */
export function unbuiltRecord(
  folder: {
    exit: ExitFile;
    admit: AdmitFile | null;
    spec: SpecFile | null;
    backend: { id: RecordFile["backend"] };
    dispatchId: string;
  },
  error: unknown,
): RecordFile {
  const { exit, admit, spec } = folder;
  const unbuilt = asCatherdError(error).message;
  const judged = judgeEnding(
    { reason: exit.reason, code: exit.code, signal: exit.signal, error: exit.error, unbuilt },
    null,
  );
  return {
    schema: SCHEMA_VERSION,
    dispatchId: folder.dispatchId,
    run: admit?.run ?? null,
    name: admit?.name ?? null,
    backend: folder.backend.id,
    model: admit?.model ?? null,
    status: judged.status,
    reason: exit.reason,
    exitCode: exit.code,
    signal: exit.signal,
    startedAt: exit.startedAt,
    endedAt: exit.endedAt,
    secs: exit.durationMs === null ? null : Math.round(exit.durationMs / 100) / 10,
    thread: exit.thread ?? null,
    tokens: { input: 0, cached: 0, output: 0 },
    costUsd: null,
    costSource: null,
    reply: null,
    replyPath: null,
    changedFiles: null,
    error: judged.failure === null ? null : { ...judged.failure, tail: [] },
    patch: null,
    worktree: null,
    commits: null,
    tmp: null,
    admittedAt: admit?.admittedAt ?? null,
    maxTokens: spec?.maxTokens ?? null,
    maxCostUsd: spec?.maxCostUsd ?? null,
    ...(spec?.answerSchema == null ? {} : { answer: null, answerErrors: null }),
    ...(admit?.attempt === undefined && admit?.ladder === undefined
      ? {}
      : { attempt: admit.attempt ?? 1, failoverFrom: admit.failoverFrom ?? null, next: null }),
  };
}
