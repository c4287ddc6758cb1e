import * as fs from "node:fs";
import * as os from "node:os";
import type { HostIdentity } from "../domain/state/host.js";

// This process's host (src/domain/state/host.ts): its name, its boot, its PID namespace. Read once: none of
// them changes under a running process (a process's own PID namespace is fixed for its life).

let cached: HostIdentity | null = null;

/** The identity of the host this process runs on. */
export function hostIdentity(): HostIdentity {
  cached ??= readHostIdentity();
  return cached;
}

/** Reads the identity afresh from `procRoot` (Linux's /proc); the fields it cannot read are null. */
export function readHostIdentity(procRoot = "/proc"): HostIdentity {
  return {
    name: os.hostname(),
    bootId: readTrimmed(`${procRoot}/sys/kernel/random/boot_id`),
    pidNamespace: namespaceInode(`${procRoot}/self/ns/pid`),
  };
}

function readTrimmed(file: string): string | null {
  try {
    const text = fs.readFileSync(file, "utf8").trim();
    return text === "" ? null : text;
  } catch {
    return null;
  }
}

/** The inode of a namespace link (`pid:[4026531836]` → "4026531836"). */
function namespaceInode(link: string): string | null {
  try {
    const m = /\[(\d+)\]$/.exec(fs.readlinkSync(link));
    return m === null ? null : (m[1] as string);
  } catch {
    return null;
  }
}
