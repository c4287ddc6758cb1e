import { type DispatchCgroup, folderFor } from "./dispatch-cgroup.js";
import { keyedNumber, readCgroupFile, singleNumber } from "./files.js";

/** What a dispatch's cgroup counted; null where the machine's cgroups do not count it. */
export interface CgroupUsage {
  /** CPU time of every process that ran in it (v2 cpu.stat usage_usec, v1 cpuacct.usage). */
  cpuSeconds: number | null;
  /** The most memory it held at once (v2 memory.peak, v1 memory.max_usage_in_bytes). */
  peakMemoryBytes: number | null;
  /** Processes the OOM killer killed in it (v2 memory.events, v1 memory.oom_control: oom_kill). */
  oomKills: number | null;
  /** Forks refused because pids.max was reached (pids.events: max). */
  pidsLimitHits: number | null;
}

/** Reads the cgroup's counters; read them after the kill and before removing it. */
export function readUsage(cgroup: DispatchCgroup): CgroupUsage {
  const cpu = folderFor(cgroup, "cpu");
  const memory = folderFor(cgroup, "memory");
  const pids = folderFor(cgroup, "pids");
  let cpuSeconds: number | null = null;
  if (cpu?.version === 2) {
    const usec = keyedNumber(readCgroupFile(cpu.dir, "cpu.stat"), "usage_usec");
    cpuSeconds = usec === null ? null : usec / 1e6;
  } else if (cpu?.version === 1) {
    const nsec = singleNumber(readCgroupFile(cpu.dir, "cpuacct.usage"));
    cpuSeconds = nsec === null ? null : nsec / 1e9;
  }
  let peakMemoryBytes: number | null = null;
  let oomKills: number | null = null;
  if (memory?.version === 2) {
    peakMemoryBytes = singleNumber(readCgroupFile(memory.dir, "memory.peak"));
    oomKills = keyedNumber(readCgroupFile(memory.dir, "memory.events"), "oom_kill");
  } else if (memory?.version === 1) {
    peakMemoryBytes = singleNumber(readCgroupFile(memory.dir, "memory.max_usage_in_bytes"));
    oomKills = keyedNumber(readCgroupFile(memory.dir, "memory.oom_control"), "oom_kill");
  }
  const pidsLimitHits = pids === null ? null : keyedNumber(readCgroupFile(pids.dir, "pids.events"), "max");
  return { cpuSeconds, peakMemoryBytes, oomKills, pidsLimitHits };
}
