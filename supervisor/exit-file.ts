import { diskFullWords } from "../src/domain/disk.js";
import type { EngineWords } from "../src/domain/schemas.js";
import { formatSize } from "../src/domain/size.js";
import type { Containment, EndingErrorCode, ErrorKind, ExitReason } from "../src/domain/vocab.js";
import type { WatchState } from "../src/domain/watch.js";
import { writeExit } from "../src/folder/exit.js";
import type { FILES } from "../src/folder/layout.js";
import type { FolderJsonBody } from "../src/folder/write.js";
import type { CgroupUsage } from "../src/infra/cgroup/usage.js";
import { diskFullOf } from "../src/infra/disk-space.js";
import type { StopReport } from "../src/infra/stop.js";
import type { ChildExit, RunningChild } from "./child.js";
import type { SupervisorDeps } from "./deps.js";
import { markDiskFull, reserveWriter } from "./disk-reserve.js";
import { failure, type SupervisorLog } from "./log.js";

/** How a supervised run ended: the reason, the watch state it ended in, and the error if any. */
export interface Ending {
  reason: ExitReason;
  /** What the provider's words made of the end (decide's verdict), or `oom`; null when nothing. */
  kind: ErrorKind | null;
  state: WatchState | null;
  /** `engine`: what the engine said of the job it ended, for a supervisor an engine placed. */
  error: { code: EndingErrorCode; message: string; engine?: EngineWords } | null;
  /** A steerable dispatch: how long its ended turns waited for messages; absent: not steerable. */
  keptOpenMs?: number;
}

/**
 * An agent that ended by SIGKILL (or, adopted, by a signal nobody can know) while its cgroup counted an
 * OOM kill was killed by the kernel for memory: the ending says so (E_AGENT_OOM), not a mystery SIGKILL.
 */
export function oomEnding(
  ending: Ending,
  exit: ChildExit | null,
  usage: CgroupUsage | null,
  memoryBytes: number | null,
): Ending {
  if (ending.reason !== "exited" || ending.error !== null || (usage?.oomKills ?? 0) === 0) return ending;
  const killed = exit === null || exit.signal === "SIGKILL" || (exit.code === null && exit.signal === null);
  if (!killed) return ending;
  const limit = memoryBytes === null ? "" : ` of ${formatSize(memoryBytes)}`;
  return {
    ...ending,
    kind: "oom",
    error: {
      code: "E_AGENT_OOM",
      message: `the agent was killed by the OOM killer: its dispatch reached its memory limit${limit}`,
    },
  };
}

/**
 * exit.json from what the supervisor knows; false (logged) when it cannot be written. A disk too full for
 * it gets it through the reserve (disk-reserve.ts), saying so — kind `disk`, E_IO_WRITE — whatever the
 * ending was: the agent's last lines may be what the disk refused. Without a reserve either, `disk-full` is
 * left for the reader that records the dispatch.
 */
export function writeExitFile(
  dir: string,
  deps: SupervisorDeps,
  log: SupervisorLog,
  facts: {
    ending: Ending;
    stop: StopReport;
    child: RunningChild | null;
    startedAt: Date;
    startedMono: number;
    durationMs: number;
    adoptions: number;
    containment: Containment | null;
    usage: CgroupUsage | null;
  },
): boolean {
  const { ending, child, usage } = facts;
  const state = ending.state;
  const durationMs = Math.max(0, facts.durationMs);
  const toIso = (mono: number | null) =>
    mono === null ? null : new Date(facts.startedAt.getTime() + (mono - facts.startedMono)).toISOString();
  const exit: FolderJsonBody<typeof FILES.exit> = {
    reason: ending.reason,
    kind: ending.kind,
    code: child?.exit?.code ?? null,
    signal: child?.exit?.signal ?? null,
    startedAt: facts.startedAt.toISOString(),
    // One timeline with startedAt and every time below: the start plus the monotonic duration, never
    // before the start whatever the wall clock did meanwhile (or says in an adopter).
    endedAt: new Date(facts.startedAt.getTime() + durationMs).toISOString(),
    durationMs,
    pid: child?.pid ?? null,
    sawFinal: state?.finalAt !== null && state?.finalAt !== undefined,
    thread: state?.thread ?? null,
    openToolCalls: (state?.openTools ?? []).map((t) => ({
      id: t.id,
      label: t.label,
      openedAt: toIso(t.openedAt) ?? "",
    })),
    retries: state?.totalRetries ?? 0,
    lastEventAt: toIso(state?.lastEventAt ?? null),
    stalled: state?.stalled ?? false,
    stop: facts.stop,
    error: ending.error,
    adoptions: facts.adoptions,
    containment: facts.containment,
    cpuSeconds:
      usage?.cpuSeconds === null || usage === null ? null : Math.round(usage.cpuSeconds * 1000) / 1000,
    peakMemoryBytes: usage?.peakMemoryBytes ?? null,
    oomKills: usage?.oomKills ?? null,
    slotWaitMs: state === null ? null : Math.round(state.slotWaitedMs),
    ...(ending.keptOpenMs === undefined ? {} : { keptOpenMs: Math.round(ending.keptOpenMs) }),
  };
  try {
    writeExit(dir, exit, deps.files);
    return true;
  } catch (error) {
    log("exit-write-failed", failure(error));
    const full = diskFullOf(error, dir);
    if (full === null) return false;
    const words = diskFullWords(full);
    const onFullDisk: typeof exit =
      exit.kind === "disk"
        ? exit
        : {
            ...exit,
            kind: "disk",
            error: {
              code: "E_IO_WRITE",
              message: `${words}: the dispatch ended (${exit.reason}) with its disk full, its output may lack its last lines`,
            },
          };
    try {
      writeExit(dir, onFullDisk, reserveWriter(dir));
      log("exit-written-from-reserve", { place: full.place });
      return true;
    } catch (again) {
      log("exit-write-failed", { ...failure(again), reserve: true });
      markDiskFull(dir);
      return false;
    }
  }
}
