import * as fs from "node:fs";
import * as path from "node:path";
import {
  type CgroupMount,
  type CgroupPaths,
  folderOf,
  parseMountInfo,
  parseProcCgroup,
} from "./cgroup-mounts.js";
import { hasCgroupFile, readCgroupFile, writeCgroupFile } from "./files.js";

/** The folder catherd keeps its per-dispatch cgroups in, in each hierarchy it uses. */
export const CATHERD_CGROUP = "catherd";

/** What a hierarchy is used for: kill everything (membership), cap memory, cap processes, count CPU. */
export type CgroupRole = "kill" | "memory" | "pids" | "cpu";

/** How every member is killed: `cgroup.kill` (cgroup v2, Linux ≥ 5.14), or freeze, SIGKILL each, thaw. */
export type KillMode = "cgroup.kill" | "freeze";

/** One hierarchy a dispatch's cgroup lives in. */
export interface CgroupHierarchy {
  version: 1 | 2;
  /** The catherd folder of this hierarchy: each dispatch's cgroup is a child of it. */
  parent: string;
  roles: CgroupRole[];
}

/** What this machine gives catherd; the hierarchy holding the "kill" role comes first. */
export interface CgroupLayout {
  kill: KillMode;
  hierarchies: CgroupHierarchy[];
}

export interface DetectOptions {
  /** Use a mounted cgroup2 hierarchy (the default). false: as on a machine with v1 hierarchies only. */
  unified?: boolean;
  /** Use `cgroup.kill` where the kernel has it (the default). false: as on a kernel before 5.14. */
  cgroupKill?: boolean;
}

const V1_ROLES = [
  ["freezer", "kill"],
  ["memory", "memory"],
  ["pids", "pids"],
  ["cpuacct", "cpu"],
] as const;

/**
 * What cgroups this process can give its dispatches, or null when none can be killed whole (not Linux, no
 * cgroup mounted, no right to create one). Prefers the v2 hierarchy for everything it offers, and takes
 * what v2 lacks (on a hybrid machine: memory and pids, even the freezer) from the v1 hierarchies. Creates
 * the catherd folder in each hierarchy it uses (an empty folder, kept between dispatches). Never throws.
 */
export function detectCgroups(options: DetectOptions = {}): CgroupLayout | null {
  if (process.platform !== "linux") return null;
  let mounts: CgroupMount[];
  let own: CgroupPaths;
  try {
    mounts = parseMountInfo(fs.readFileSync("/proc/self/mountinfo", "utf8"));
    own = parseProcCgroup(fs.readFileSync("/proc/self/cgroup", "utf8"));
  } catch {
    return null;
  }
  const hierarchies: CgroupHierarchy[] = [];
  let kill: KillMode | null = null;

  const v2Mount = options.unified === false ? undefined : mounts.find((m) => m.version === 2);
  const v2 = v2Mount === undefined ? null : catherdFolder(v2Mount, own.unified);
  if (v2 !== null) {
    const canKill = options.cgroupKill !== false && hasCgroupFile(v2, "cgroup.kill");
    if (canKill || hasCgroupFile(v2, "cgroup.freeze")) {
      kill = canKill ? "cgroup.kill" : "freeze";
      const roles: CgroupRole[] = ["kill", ...enableControllers(v2, ["memory", "pids"])];
      if (hasCgroupFile(v2, "cpu.stat")) roles.push("cpu");
      hierarchies.push({ version: 2, parent: v2, roles });
    }
  }
  for (const [controller, role] of V1_ROLES) {
    if (hierarchies.some((h) => h.roles.includes(role))) continue;
    const mount = mounts.find((m) => m.version === 1 && m.controllers.includes(controller));
    const parent = mount === undefined ? null : catherdFolder(mount, own.v1[controller] ?? null);
    if (parent === null) continue;
    // One v1 hierarchy may bind several controllers (cpu,cpuacct): one folder, several roles.
    const shared = hierarchies.find((h) => h.parent === parent);
    if (shared === undefined) hierarchies.push({ version: 1, parent, roles: [role] });
    else shared.roles.push(role);
    if (role === "kill") kill = "freeze";
  }
  if (kill === null) return null;
  hierarchies.sort((a, b) => Number(b.roles.includes("kill")) - Number(a.roles.includes("kill")));
  return { kill, hierarchies };
}

/**
 * The catherd folder of a hierarchy, created if missing: at the hierarchy's root when this process may
 * write there (root), else beside its own cgroup (a delegated subtree: systemd's user@.service). Null when
 * neither can be written.
 */
function catherdFolder(mount: CgroupMount, ownPath: string | null): string | null {
  const ownFolder = ownPath === null ? null : folderOf(mount, ownPath);
  const bases = [mount.mountPoint];
  if (ownFolder !== null && ownFolder !== mount.mountPoint) bases.push(path.dirname(ownFolder));
  for (const base of bases) {
    const folder = path.join(base, CATHERD_CGROUP);
    try {
      fs.mkdirSync(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") continue;
    }
    if (hasCgroupFile(folder, "cgroup.procs")) return folder;
  }
  return null;
}

/**
 * Enables the wanted v2 controllers for the children of `folder` where its parent offers them; returns
 * those enabled. The catherd folder holds no process, so the v2 "no internal processes" rule allows it.
 */
function enableControllers(folder: string, wanted: readonly ("memory" | "pids")[]): ("memory" | "pids")[] {
  const words = (name: string) => new Set((readCgroupFile(folder, name) ?? "").trim().split(/\s+/));
  const offered = words("cgroup.controllers");
  const enabled = words("cgroup.subtree_control");
  return wanted.filter((controller) => {
    if (enabled.has(controller)) return true;
    if (!offered.has(controller)) return false;
    try {
      writeCgroupFile(folder, "cgroup.subtree_control", `+${controller}`);
      return true;
    } catch {
      return false;
    }
  });
}
