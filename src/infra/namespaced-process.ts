import * as fs from "node:fs";
import { hostIdentity } from "./host-identity.js";
import { isSameProcess, startTimeOf } from "./process-identity.js";

// A process named from inside a PID namespace — by its pid there, its start time and the namespace
// (`pid:[inode]`, as /proc/<pid>/ns/pid reads) — judged from this process's own namespace (specs/lock.md,
// "Who holds a slot"). A sandbox's `catherd lock` names itself so (specs/sandbox.md, "Processes"): the
// supervisor and every catherd outside find it through the namespace's members in their /proc, whose
// `NSpid` line gives each one's pid in every namespace from theirs down. The start time is read from
// /proc/<pid>/stat: ticks since boot, the same in every namespace of the boot.

/** The kernel's initial PID namespace (PROC_PID_INIT_INO): every other one is below it, and seen from it. */
export const INITIAL_PID_NAMESPACE = "pid:[4026531836]";

/**
 * `alive`/`dead`: known from here. `unseen`: its namespace is not below this process's (a sandbox's claim
 * read from another sandbox, the host's read from inside one), so nothing here can tell.
 */
export type ProcessSight = "alive" | "dead" | "unseen";

export interface NamespacedProcess {
  pid: number;
  startTime: string | null;
  /** Null: the namespace was not known to its writer; judged as one of ours. */
  pidNs: string | null;
}

/** This process's PID namespace as its /proc link reads, or null where there is none (not Linux). */
export function ownPidNamespace(): string | null {
  const inode = hostIdentity().pidNamespace;
  return inode === null ? null : `pid:[${inode}]`;
}

/** The pid here of a process of namespace `pidNs` whose pid there is `innerPid`, cached once found. */
const translated = new Map<string, number>();

/**
 * Whether the process lives, judged from here. One of another namespace is looked for among that
 * namespace's members in this /proc; none there is `dead` when this process sees every namespace (it is
 * in the initial one: a namespace with no member has ended), else `unseen`.
 */
export function sightOf(p: NamespacedProcess, own = ownPidNamespace()): ProcessSight {
  if (p.pidNs === null || p.pidNs === own) return isSameProcess(p.pid, p.startTime) ? "alive" : "dead";
  const key = `${p.pidNs}:${p.pid}:${p.startTime}`;
  const known = translated.get(key);
  if (known !== undefined && startTimeOf(known) === p.startTime) return "alive";
  translated.delete(key);
  const found = findIn(p.pidNs, p.pid);
  if (found.members === 0) return own === INITIAL_PID_NAMESPACE ? "dead" : "unseen";
  if (found.pid === null) return "dead";
  const alive = p.startTime === null || startTimeOf(found.pid) === p.startTime;
  if (alive) translated.set(key, found.pid);
  return alive ? "alive" : "dead";
}

/** How many processes of `pidNs` this /proc shows, and the pid here of the one that is `innerPid` there. */
function findIn(pidNs: string, innerPid: number): { members: number; pid: number | null } {
  let members = 0;
  let entries: string[];
  try {
    entries = fs.readdirSync("/proc");
  } catch {
    return { members, pid: null };
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    if (readLink(`/proc/${name}/ns/pid`) !== pidNs) continue;
    members += 1;
    if (innerPidOf(name) === innerPid) return { members, pid: Number(name) };
  }
  return { members, pid: null };
}

function readLink(link: string): string | null {
  try {
    return fs.readlinkSync(link);
  } catch {
    return null;
  }
}

/** The last pid of /proc/<pid>/status's NSpid line: the process's pid in its own namespace. */
function innerPidOf(pid: string): number | null {
  try {
    const line = /^NSpid:\s*(.+)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    const last = line?.trim().split(/\s+/).pop();
    return last === undefined ? null : Number(last);
  } catch {
    return null;
  }
}
