import { type DispatchCgroup, membersOf } from "./cgroup/dispatch-cgroup.js";
import { killCgroup } from "./cgroup/kill.js";
import type { Clock } from "./clock.js";
import { readProcStat } from "./proc-stat.js";
import { groupAlive, isSameProcess, signalGroup, signalIdentified } from "./process-identity.js";
import { findByDispatchVariable, findDescendants, type ProcessRef } from "./sweep.js";
import { waitUntil } from "./wait-until.js";

/** What the stop sequence did, for exit.json's `stop`. */
export interface StopReport {
  term: boolean;
  kill: boolean;
  swept: number;
}

export interface StopTarget {
  dispatchId: string;
  /** The agent's process group (its pid: it leads the group); null when unknown: only the sweep runs. */
  pgid: number | null;
  /** The agent itself, while it may still be alive. */
  leader: ProcessRef | null;
  killGraceMs: number;
  /** The dispatch's cgroup, when it has one: everything in it is killed, wherever it went. */
  cgroup?: DispatchCgroup | null;
  /** Called right after SIGTERM reached the group (the supervisor's test pause hook). */
  onTermSent?: () => void;
}

const GROUP_POLL_MS = 25;
/**
 * SIGTERM again this often while the group lives within its grace: a CLI can drop one (opencode 1.18 while
 * it installs its plugin in the background: its handlers swallow the signal), never a second that comes
 * after its window.
 */
export const TERM_REPEAT_MS = 1000;
const SWEEP_ROUNDS = 5;

/**
 * Stops everything a dispatch started: SIGTERM to the group (again each TERM_REPEAT_MS), up to killGraceMs for it to go, SIGKILL to
 * the group unconditionally, then everything left in the dispatch's cgroup (cgroup.kill: no fork, setsid
 * or cleared environment escapes it), then SIGKILL to every escaped descendant found by parent chain and
 * by the CATHERD_DISPATCH variable, each only if its pid and start time read back exactly. `swept` counts
 * the processes killed outside the group, by the cgroup or by the sweep.
 */
export async function stopDispatch(target: StopTarget, clock: Clock): Promise<StopReport> {
  const report: StopReport = { term: false, kill: false, swept: 0 };
  // Snapshot the tree first: once the leader dies, its children are reparented and the chain is lost.
  const escaped = await snapshotDescendants(target);

  const group = target.pgid;
  if (group !== null && groupAlive(group)) {
    report.term = signalGroup(group, "SIGTERM");
    target.onTermSent?.();
    let termAgainAt = clock.now() + TERM_REPEAT_MS;
    await waitUntil(
      () => {
        if (!groupAlive(group)) return true;
        if (clock.now() >= termAgainAt) {
          signalGroup(group, "SIGTERM");
          termAgainAt += TERM_REPEAT_MS;
        }
        return undefined;
      },
      { clock, deadline: clock.now() + target.killGraceMs, pollMs: GROUP_POLL_MS },
    );
  }
  // Unconditional: members may be stopped (SIGSTOP ignores SIGTERM) or may have just forked.
  report.kill = group !== null && signalGroup(group, "SIGKILL");
  let killedInCgroup = 0;
  if (target.cgroup !== undefined && target.cgroup !== null) {
    // Members outside the group escaped it (setsid): they count as swept, as the sweep would count them.
    const outside = membersOf(target.cgroup).filter((pid) => readProcStat(pid)?.pgid !== group);
    await killCgroup(target.cgroup, clock);
    killedInCgroup = outside.length;
  }
  report.swept = killedInCgroup + sweep(target.dispatchId, escaped);
  return report;
}

async function snapshotDescendants(target: StopTarget): Promise<ProcessRef[]> {
  const roots =
    target.leader !== null && isSameProcess(target.leader.pid, target.leader.startTime)
      ? [target.leader.pid]
      : [];
  try {
    return [...(await findDescendants(roots)), ...findByDispatchVariable(target.dispatchId)];
  } catch {
    return findByDispatchVariable(target.dispatchId);
  }
}

/** SIGKILLs what is left of the snapshot and whatever still carries the dispatch's variable. */
export function sweep(dispatchId: string, known: readonly ProcessRef[]): number {
  const killed = new Set<number>();
  let candidates: readonly ProcessRef[] = known;
  // A few rounds: a process can fork between our scan and our signal.
  for (let round = 0; round < SWEEP_ROUNDS; round++) {
    let hit = 0;
    for (const ref of candidates) {
      if (signalIdentified(ref.pid, ref.startTime, "SIGKILL")) {
        hit += 1;
        killed.add(ref.pid);
      }
    }
    candidates = findByDispatchVariable(dispatchId);
    if (hit === 0 && candidates.length === 0) break;
  }
  return killed.size;
}
