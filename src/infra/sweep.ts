import * as fs from "node:fs";
import { listLinuxPids, startTimeOf } from "./process-identity.js";

// Finding what a dispatch started, even after it escaped its process group (setsid) and was reparented
// to init: by the CATHERD_DISPATCH variable every descendant inherits, and by parent chain.

export interface ProcessRef {
  pid: number;
  startTime: string;
}

/** Linux: every live process whose environment carries CATHERD_DISPATCH=<dispatchId>, except this one. */
export function findByDispatchVariable(dispatchId: string): ProcessRef[] {
  if (process.platform !== "linux") return [];
  const needle = Buffer.from(`\0CATHERD_DISPATCH=${dispatchId}\0`);
  const found: ProcessRef[] = [];
  for (const pid of listLinuxPids()) {
    if (pid === process.pid || pid <= 1) continue;
    let environ: Buffer;
    try {
      environ = fs.readFileSync(`/proc/${pid}/environ`);
    } catch {
      continue; // gone, or not ours to read
    }
    // Prefix a NUL so the first variable matches the same needle as the others.
    if (Buffer.concat([Buffer.from([0]), environ, Buffer.from([0])]).includes(needle)) {
      const startTime = startTimeOf(pid);
      if (startTime !== null) found.push({ pid, startTime });
    }
  }
  return found;
}

/** Every live descendant of the given roots, by parent chain (ps-list, loaded only when a stop needs it). */
export async function findDescendants(rootPids: readonly number[]): Promise<ProcessRef[]> {
  if (rootPids.length === 0) return [];
  const { default: psList } = await import("ps-list");
  let table: { pid: number; ppid: number }[];
  try {
    table = await psList({ all: true });
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const { pid, ppid } of table) {
    const list = children.get(ppid);
    if (list === undefined) children.set(ppid, [pid]);
    else list.push(pid);
  }
  const seen = new Set<number>();
  const queue = [...rootPids];
  while (queue.length > 0) {
    const parent = queue.pop() as number;
    for (const child of children.get(parent) ?? []) {
      if (seen.has(child) || child === process.pid || child <= 1) continue;
      seen.add(child);
      queue.push(child);
    }
  }
  const found: ProcessRef[] = [];
  for (const pid of seen) {
    const startTime = startTimeOf(pid);
    if (startTime !== null) found.push({ pid, startTime });
  }
  return found;
}
