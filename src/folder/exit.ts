import type { EngineWords, ExitFile } from "../domain/schemas.js";
import type { EndingErrorCode, ErrorKind, ExitReason } from "../domain/vocab.js";
import { FILES } from "./layout.js";
import {
  atomicWriter,
  createFolderJson,
  type FolderJsonBody,
  type JsonWriter,
  writeFolderJson,
} from "./write.js";

/** exit.json as the supervisor writes it: replaced atomically, through the supervisor's own writer. */
export function writeExit(
  dir: string,
  exit: FolderJsonBody<typeof FILES.exit>,
  writer: JsonWriter = atomicWriter,
): void {
  writeFolderJson(dir, FILES.exit, exit, writer);
}

/**
 * exit.json for a dispatch ended by someone other than its supervisor (a reader finding it lost, cancel
 * stopping an orphan, dispatch failing to start it). Created exclusively: racing writers agree on one.
 * False when an exit.json exists already.
 */
export function writeEndedExit(
  dir: string,
  facts: {
    reason: ExitReason;
    error: { code: EndingErrorCode; message: string; engine?: EngineWords | undefined };
    /** The kind the ending itself says (an engine's OUT_OF_MEMORY: `oom`); null by default. */
    kind?: ErrorKind | null;
    stop?: ExitFile["stop"];
    pid?: number | null;
    startedAt?: string | null;
    adoptions?: number;
  },
  endedAt: Date,
): boolean {
  return createFolderJson(dir, FILES.exit, {
    reason: facts.reason,
    code: null,
    signal: null,
    startedAt: facts.startedAt ?? null,
    endedAt: endedAt.toISOString(),
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
    adoptions: facts.adoptions ?? 0,
    containment: null,
    cpuSeconds: null,
    peakMemoryBytes: null,
    oomKills: null,
    slotWaitMs: null,
    // The reason (lost, cancelled…) is the whole story: no provider's words made anything of it.
    kind: facts.kind ?? null,
  });
}
