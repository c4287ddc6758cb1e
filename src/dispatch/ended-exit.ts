import * as path from "node:path";
import { type ExitFile, SCHEMA_VERSION } from "../domain/schemas.js";
import type { ErrorCode, ExitReason } from "../domain/vocab.js";
import { createJsonExclusive } from "../infra/atomic.js";

/**
 * exit.json for a dispatch ended by someone other than its supervisor (a reader finding it lost, cancel
 * stopping an orphan, dispatch failing to start it). Created exclusively: racing writers agree on one.
 */
export function writeEndedExit(
  dir: string,
  facts: {
    reason: ExitReason;
    error: { code: ErrorCode; message: string };
    stop?: ExitFile["stop"];
    pid?: number | null;
    startedAt?: string | null;
  },
): boolean {
  const exit: ExitFile = {
    schema: SCHEMA_VERSION,
    reason: facts.reason,
    code: null,
    signal: null,
    startedAt: facts.startedAt ?? null,
    endedAt: new Date().toISOString(),
    durationMs: null,
    pid: facts.pid ?? null,
    sawFinal: false,
    thread: null,
    openToolCalls: [],
    retries: 0,
    lastEventAt: null,
    stalled: false,
    stop: facts.stop ?? { term: false, kill: false, swept: 0 },
    error: facts.error,
  };
  return createJsonExclusive(path.join(dir, "exit.json"), exit);
}
