import * as fs from "node:fs";
import * as path from "node:path";
import { type CgroupLayout, detectCgroups } from "./detect.js";
import { cgroupName, type DispatchCgroup, removeDispatchCgroup } from "./dispatch-cgroup.js";
import { pidsIn } from "./files.js";

// The cgroups a dispatch leaves behind when its supervisor cannot remove them (it was killed): whoever
// records the dispatch removes its cgroup, and `clean` removes those whose dispatch is gone. Only empty
// cgroups are removed (the kernel refuses the others); nothing here signals a process.

/**
 * Removes the cgroup of the dispatch `dispatchId` in folder `dir` in every hierarchy where it is empty.
 * True when none of it is left (or the machine gives catherd no cgroups).
 */
export function removeCgroupOf(dispatchId: string, dir: string, layout = detectCgroups()): boolean {
  if (layout === null) return true;
  return removeDispatchCgroup(cgroupOf(layout, cgroupName(dispatchId, dir)));
}

/** A dispatch cgroup's name, with the creation time its dispatch id begins with (ms), or NaN. */
export interface CgroupEntry {
  name: string;
  createdMs: number;
}

/** Every dispatch cgroup under catherd's cgroup, by name (the hierarchies hold the same names). */
export function dispatchCgroups(layout = detectCgroups()): CgroupEntry[] {
  if (layout === null) return [];
  const names = new Set<string>();
  for (const hierarchy of layout.hierarchies) {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(hierarchy.parent, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) if (entry.isDirectory()) names.add(entry.name);
  }
  return [...names].map((name) => ({ name, createdMs: createdMsOf(name) }));
}

/**
 * Removes the empty dispatch cgroups that `keep` does not claim and whose dispatch was created more than
 * `minAgeMs` before `nowMs`, or that `ended` names (a recorded dispatch's: nothing will join it again):
 * a live dispatch's cgroup is empty only for moments (between its creation and the agent joining it, and
 * between the agent's end and its record), and a dispatch of another home is known to neither. Returns
 * the names removed (with `dryRun`, those it would remove).
 */
export function removeLeftoverCgroups(
  nowMs: number,
  minAgeMs: number,
  keep: (name: string) => boolean,
  {
    dryRun = false,
    layout = detectCgroups(),
    ended = () => false,
  }: { dryRun?: boolean; layout?: CgroupLayout | null; ended?: (name: string) => boolean } = {},
): string[] {
  if (layout === null) return [];
  const removed: string[] = [];
  for (const { name, createdMs } of dispatchCgroups(layout)) {
    if (keep(name) || !(ended(name) || nowMs - createdMs > minAgeMs)) continue;
    const cgroup = cgroupOf(layout, name);
    if (cgroup.folders.some((f) => pidsIn(f.dir).length > 0)) continue;
    if (dryRun || removeDispatchCgroup(cgroup)) removed.push(name);
  }
  return removed;
}

function cgroupOf(layout: CgroupLayout, name: string): DispatchCgroup {
  return {
    layout,
    name,
    folders: layout.hierarchies.map((hierarchy) => ({ hierarchy, dir: path.join(hierarchy.parent, name) })),
  };
}

/** `20261201T101500Z-k3x9qa-<hash>` → that time; NaN for a name not made by cgroupName from an id. */
function createdMsOf(name: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-/.exec(name);
  if (m === null) return Number.NaN;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}
