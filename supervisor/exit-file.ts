import { type ExitFacts, judgeEnding, type Sighting } from "../src/domain/ending/ending.js";
import type { Containment, ExitReason } from "../src/domain/vocab.js";
import { diskFullWords } from "../src/domain/watch/disk.js";
import type { WatchState } from "../src/domain/watch/watch.js";
import { writeExit } from "../src/folder/exit.js";
import type { FILES } from "../src/folder/layout.js";
import type { FolderJsonBody } from "../src/folder/write.js";
import type { CgroupUsage } from "../src/infra/cgroup/cgroup-usage.js";
import { diskFullOf } from "../src/infra/disk-space.js";
import type { StopReport } from "../src/infra/stop.js";
import type { ChildExit, RunningChild } from "./child.js";
import type { SupervisorDeps } from "./deps.js";
import { markDiskFull, reserveWriter } from "./disk-reserve.js";
import { failure, type SupervisorLog } from "./log.js";

/**
 * How a supervised run ended, as the supervisor saw it: the reason, the watch state it ended in, and what
 * it saw of the end (a full disk, a cap, a signal, the engine's end, its own error). The kind and the
 * error exit.json keeps are decided from these by src/domain/ending/ending.ts, when exit.json is written.
 */
export interface Ending {
  reason: ExitReason;
  seen: Sighting;
  state: WatchState | null;
  /** A steerable dispatch: how long its ended turns waited for messages; absent: not steerable. */
  keptOpenMs?: number;
}

/** Everything exit.json is made from. */
export interface ExitFileFacts {
  ending: Ending;
  stop: StopReport;
  child: RunningChild | null;
  startedAt: Date;
  startedMono: number;
  durationMs: number;
  adoptions: number;
  containment: Containment | null;
  usage: CgroupUsage | null;
  /** The dispatch's memory limit, named when the OOM killer ended its agent; null: none. */
  memoryBytes: number | null;
}

type ExitBody = FolderJsonBody<typeof FILES.exit>;

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
  facts: ExitFileFacts,
): boolean {
  const judged = { ...judgedFacts(facts), seen: seenOf(facts) };
  try {
    writeExit(dir, exitBody(facts, judged), deps.files);
    return true;
  } catch (error) {
    log("exit-write-failed", failure(error));
    const full = diskFullOf(error, dir);
    if (full === null) return false;
    const onFullDisk = { ...judged, seen: { ...judged.seen, exitOnFullDisk: diskFullWords(full) } };
    try {
      writeExit(dir, exitBody(facts, onFullDisk), reserveWriter(dir));
      log("exit-written-from-reserve", { place: full.place });
      return true;
    } catch (again) {
      log("exit-write-failed", { ...failure(again), reserve: true });
      markDiskFull(dir);
      return false;
    }
  }
}

/** How the agent's process ended, as the verdict weighs it. */
function judgedFacts(facts: ExitFileFacts): Omit<ExitFacts, "seen"> {
  const exit: ChildExit | null = facts.child?.exit ?? null;
  return { reason: facts.ending.reason, code: exit?.code ?? null, signal: exit?.signal ?? null };
}

/** What the supervisor saw, with the OOM kills its cgroup counted. */
function seenOf(facts: ExitFileFacts): Sighting {
  const kills = facts.usage?.oomKills ?? 0;
  return { ...facts.ending.seen, oom: { kills, memoryBytes: facts.memoryBytes } };
}

/** exit.json's body: the verdict's reason, kind and error (src/domain/ending/ending.ts), and the run's figures. */
function exitBody(facts: ExitFileFacts, judged: ExitFacts): ExitBody {
  const { ending, child, usage } = facts;
  const verdict = judgeEnding(judged, null);
  const state = ending.state;
  const durationMs = Math.max(0, facts.durationMs);
  const toIso = (mono: number | null) =>
    mono === null ? null : new Date(facts.startedAt.getTime() + (mono - facts.startedMono)).toISOString();
  return {
    reason: verdict.reason,
    kind: verdict.kind ?? null,
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
    error: verdict.said,
    adoptions: facts.adoptions,
    containment: facts.containment,
    cpuSeconds:
      usage?.cpuSeconds === null || usage === null ? null : Math.round(usage.cpuSeconds * 1000) / 1000,
    peakMemoryBytes: usage?.peakMemoryBytes ?? null,
    oomKills: usage?.oomKills ?? null,
    slotWaitMs: state === null ? null : Math.round(state.slotWaitedMs),
    ...(ending.keptOpenMs === undefined ? {} : { keptOpenMs: Math.round(ending.keptOpenMs) }),
  };
}
