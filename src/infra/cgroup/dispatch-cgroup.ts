import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { CgroupHierarchy, CgroupLayout, CgroupRole } from "./detect.js";
import { hasCgroupFile, keyedNumber, pidsIn, readCgroupFile, writeCgroupFile } from "./files.js";

/** Caps on a dispatch's cgroup; null: no cap. */
export interface CgroupLimits {
  /** memory.max (v2) or memory.limit_in_bytes (v1), swap included where the kernel counts it. */
  memoryBytes: number | null;
  /** pids.max: processes and threads at once. */
  maxProcs: number | null;
}

/** One dispatch's cgroup: a folder of the same name in each hierarchy of the layout. */
export interface DispatchCgroup {
  layout: CgroupLayout;
  name: string;
  folders: { hierarchy: CgroupHierarchy; dir: string }[];
}

/**
 * The cgroup name of a dispatch: its id, made safe, and a hash of its folder, so two folders of the same
 * id (hand-written ones) never share a cgroup, and a new supervisor of the same folder finds it again.
 */
export function cgroupName(dispatchId: string, dispatchDir: string): string {
  const safe = dispatchId
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .replace(/^\.+/, "_")
    .slice(0, 64);
  const hash = createHash("sha256").update(path.resolve(dispatchDir)).digest("hex").slice(0, 10);
  return `${safe}-${hash}`;
}

/**
 * Creates the dispatch's cgroup in every hierarchy and applies the limits its hierarchies can hold;
 * returns it with the limits applied (a limit no hierarchy holds is null there). A folder left by an
 * earlier supervisor is reused only when empty. On any failure, removes what it made and throws.
 */
export function createDispatchCgroup(
  layout: CgroupLayout,
  name: string,
  limits: CgroupLimits,
): { cgroup: DispatchCgroup; applied: CgroupLimits } {
  const cgroup: DispatchCgroup = { layout, name, folders: [] };
  const applied: CgroupLimits = { memoryBytes: null, maxProcs: null };
  try {
    for (const hierarchy of layout.hierarchies) {
      const dir = path.join(hierarchy.parent, name);
      try {
        fs.mkdirSync(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        if (pidsIn(dir).length > 0) throw new Error(`cgroup ${dir} already has members`);
      }
      cgroup.folders.push({ hierarchy, dir });
      if (limits.memoryBytes !== null && hierarchy.roles.includes("memory")) {
        limitMemory(hierarchy.version, dir, limits.memoryBytes);
        applied.memoryBytes = limits.memoryBytes;
      }
      if (limits.maxProcs !== null && hierarchy.roles.includes("pids")) {
        writeCgroupFile(dir, "pids.max", String(limits.maxProcs));
        applied.maxProcs = limits.maxProcs;
      }
    }
  } catch (error) {
    removeDispatchCgroup(cgroup);
    throw error;
  }
  return { cgroup, applied };
}

/** The cgroup of a dispatch an earlier supervisor created, when every one of its folders still exists. */
export function openDispatchCgroup(layout: CgroupLayout, name: string): DispatchCgroup | null {
  const folders = layout.hierarchies.map((hierarchy) => ({
    hierarchy,
    dir: path.join(hierarchy.parent, name),
  }));
  return folders.every((f) => hasCgroupFile(f.dir, "cgroup.procs")) ? { layout, name, folders } : null;
}

/** No swap beyond the limit: an agent over it is OOM-killed, not slowed to a crawl by swapping. */
function limitMemory(version: 1 | 2, dir: string, bytes: number): void {
  if (version === 2) {
    writeCgroupFile(dir, "memory.max", String(bytes));
    if (hasCgroupFile(dir, "memory.swap.max")) writeCgroupFile(dir, "memory.swap.max", "0");
    return;
  }
  writeCgroupFile(dir, "memory.limit_in_bytes", String(bytes));
  // memory+swap may not be below memory alone, so it is set second.
  if (hasCgroupFile(dir, "memory.memsw.limit_in_bytes")) {
    writeCgroupFile(dir, "memory.memsw.limit_in_bytes", String(bytes));
  }
}

/** The folder holding `role`, or null when the layout has no hierarchy for it. */
export function folderFor(cgroup: DispatchCgroup, role: CgroupRole): { version: 1 | 2; dir: string } | null {
  const found = cgroup.folders.find((f) => f.hierarchy.roles.includes(role));
  return found === undefined ? null : { version: found.hierarchy.version, dir: found.dir };
}

/** The cgroup.procs files a process writes its own pid into to join the dispatch's cgroup everywhere. */
export function procsFiles(cgroup: DispatchCgroup): string[] {
  return cgroup.folders.map((f) => path.join(f.dir, "cgroup.procs"));
}

/** The live members (zombies are not members), as the killing hierarchy lists them. */
export function membersOf(cgroup: DispatchCgroup): number[] {
  const killer = folderFor(cgroup, "kill");
  return killer === null ? [] : pidsIn(killer.dir);
}

/** Whether any process is left in the cgroup. */
export function isPopulated(cgroup: DispatchCgroup): boolean {
  const killer = folderFor(cgroup, "kill");
  if (killer === null) return false;
  if (killer.version === 2) {
    const populated = keyedNumber(readCgroupFile(killer.dir, "cgroup.events"), "populated");
    if (populated !== null) return populated > 0;
  }
  return pidsIn(killer.dir).length > 0;
}

/** Removes the cgroup's folders (empty ones only: the kernel refuses the others); true when all are gone. */
export function removeDispatchCgroup(cgroup: DispatchCgroup): boolean {
  let all = true;
  for (const { dir } of cgroup.folders) {
    try {
      fs.rmdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") all = false;
    }
  }
  return all;
}
