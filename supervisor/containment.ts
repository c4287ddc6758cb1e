import type { Spec } from "../src/domain/schemas.js";
import type { Containment } from "../src/domain/vocab.js";
import { type CgroupUsage, readUsage } from "../src/infra/cgroup/cgroup-usage.js";
import { detectCgroups } from "../src/infra/cgroup/detect.js";
import {
  cgroupName,
  createDispatchCgroup,
  type DispatchCgroup,
  membersOf,
  openDispatchCgroup,
  procsFiles,
  removeDispatchCgroup,
} from "../src/infra/cgroup/dispatch-cgroup.js";
import { killCgroup } from "../src/infra/cgroup/kill.js";
import type { Clock } from "../src/infra/clock.js";
import { CgroupJoinFailed, type RunningChild, type SpawnRequest, spawnAgent } from "./child.js";
import type { SupervisorLog } from "./log.js";
import { cgroupsDisabledForTest } from "./test-hooks.js";

// How the supervisor holds a dispatch's processes (specs/supervisor.md, "Containment"): in a cgroup of
// their own where the machine gives catherd one, else by their process group and the sweep. The choice is
// made once, at the spawn, and said in exit.json.

/** The containment of one dispatch: its cgroup, or none (group+sweep). */
export interface Contained {
  kind: Containment;
  cgroup: DispatchCgroup | null;
}

const UNCONTAINED: Contained = { kind: "group+sweep", cgroup: null };

/**
 * Starts the agent inside a new cgroup of its own, with the spec's limits; where the machine gives none,
 * or the agent cannot join it, starts it as before (group+sweep). Logs which, and any limit no hierarchy
 * could hold. Rejects only as spawnAgent does when the command cannot be started — and then nothing it
 * started in the cgroup is left running (a sandbox that failed half way: the listeners of its bridge).
 */
export async function spawnContained(
  dir: string,
  spec: Spec,
  request: SpawnRequest,
  { log, clock }: { log: SupervisorLog; clock: Clock },
): Promise<{ child: RunningChild; contained: Contained }> {
  const contained = createContainment(dir, spec, log);
  if (contained.cgroup === null) return { child: await spawnAgent(request), contained };
  try {
    const child = await spawnAgent({ ...request, cgroupProcs: procsFiles(contained.cgroup) });
    return { child, contained };
  } catch (error) {
    await killCgroup(contained.cgroup, clock);
    removeDispatchCgroup(contained.cgroup);
    if (!(error instanceof CgroupJoinFailed)) throw error;
    log("containment", { kind: UNCONTAINED.kind, why: error.message });
    return { child: await spawnAgent(request), contained: UNCONTAINED };
  }
}

function createContainment(dir: string, spec: Spec, log: SupervisorLog): Contained {
  if (cgroupsDisabledForTest()) {
    log("containment", { kind: UNCONTAINED.kind, why: "cgroups disabled by CATHERD_TEST_ONLY_NO_CGROUP" });
    return UNCONTAINED;
  }
  const layout = detectCgroups();
  if (layout === null) {
    log("containment", { kind: UNCONTAINED.kind, why: "no cgroup this process may create" });
    return UNCONTAINED;
  }
  const limits = { memoryBytes: spec.memoryBytes, maxProcs: spec.maxProcs };
  try {
    const { cgroup, applied } = createDispatchCgroup(layout, cgroupName(spec.dispatchId, dir), limits);
    log("containment", { kind: "cgroup", name: cgroup.name, kill: layout.kill, ...applied });
    if (limits.memoryBytes !== null && applied.memoryBytes === null) {
      log("limit-unavailable", { limit: "memory", why: "no memory controller in catherd's cgroups" });
    }
    if (limits.maxProcs !== null && applied.maxProcs === null) {
      log("limit-unavailable", { limit: "max-procs", why: "no pids controller in catherd's cgroups" });
    }
    return { kind: "cgroup", cgroup };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    log("containment", { kind: UNCONTAINED.kind, why });
    return UNCONTAINED;
  }
}

/**
 * The containment an earlier supervisor of this folder gave the agent it started: its cgroup when the
 * agent is still in it, else group+sweep.
 */
export function reopenContainment(dir: string, spec: Spec, agentPid: number, log: SupervisorLog): Contained {
  const layout = cgroupsDisabledForTest() ? null : detectCgroups();
  const cgroup = layout === null ? null : openDispatchCgroup(layout, cgroupName(spec.dispatchId, dir));
  const contained: Contained =
    cgroup !== null && membersOf(cgroup).includes(agentPid) ? { kind: "cgroup", cgroup } : UNCONTAINED;
  log("containment", { kind: contained.kind, adopted: true });
  return contained;
}

/**
 * What the cgroup counted, read after the stop; then the cgroup is removed. A cgroup that cannot be
 * removed (a process stuck in the kernel) is logged and left: the next supervisor of the folder, or a
 * person, removes it once empty.
 */
export function closeContainment(contained: Contained, log: SupervisorLog): CgroupUsage | null {
  if (contained.cgroup === null) return null;
  const usage = readUsage(contained.cgroup);
  if (!removeDispatchCgroup(contained.cgroup)) {
    log("cgroup-left", { name: contained.cgroup.name, members: membersOf(contained.cgroup) });
  }
  return usage;
}
