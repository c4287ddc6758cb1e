import * as fs from "node:fs";
import * as os from "node:os";
import type { Judge, SlotClaim, SlotProcess } from "../domain/lock/slots.js";
import { hostIdentity } from "./host-identity.js";
import { ownPidNamespace, sightOf } from "./namespaced-process.js";
import { startTimeOf } from "./process-identity.js";

// Who holds a heavy slot, and whether it still lives (specs/lock.md, "Who holds a slot"): a process is
// named by pid and start time as everywhere in catherd, plus the boot it ran in (a pid and a start time
// in ticks since boot mean nothing after a reboot), the machine (a home on a shared file system serves
// one queue per machine) and its pid namespace (a pid of another namespace cannot be read from here).

/** This boot's id (Linux): a claim of another boot on this machine is from before a reboot. */
export function bootId(): string | null {
  return hostIdentity().bootId;
}

let bootTimeRead: number | null | undefined;
/** When this machine booted (ms since the epoch; Linux: /proc/stat `btime`), read once; null elsewhere. */
export function bootTimeMs(): number | null {
  if (bootTimeRead === undefined) {
    let stat = "";
    try {
      stat = fs.readFileSync("/proc/stat", "utf8");
    } catch {
      // not Linux: no boot time
    }
    const m = /^btime (\d+)$/m.exec(stat);
    bootTimeRead = m === null ? null : Number(m[1]) * 1000;
  }
  return bootTimeRead;
}

/** The pid namespace of this process as its /proc link reads (`pid:[4026531836]`), the form claims record. */
export function pidNamespace(): string | null {
  return ownPidNamespace();
}

/** How many cores this machine gives this process: the default slot count is half of them. */
export function machineCores(): number {
  return typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length;
}

/** A process of this machine as a claim records it. */
export function slotProcess(pid: number): SlotProcess {
  return {
    pid,
    startTime: startTimeOf(pid),
    bootId: bootId(),
    host: hostIdentity().name,
    pidNs: pidNamespace(),
  };
}

/**
 * Judges a claim from this process (`Judge`): another machine's is `foreign`; one of another boot of this
 * machine is `dead`; else it is live while its `catherd lock` or the command it started — both of the
 * claim's pid namespace — lives (namespaced-process.ts: one of a namespace that cannot be seen from here
 * counts as live).
 */
export function judgeClaims(): Judge {
  const here = { host: hostIdentity().name, bootId: bootId() };
  return (claim: SlotClaim) => {
    const owner = claim.owner;
    if (owner.host !== here.host) return "foreign";
    if (owner.bootId !== here.bootId) return "dead";
    if (sightOf(owner) !== "dead") return "live";
    const command = claim.command;
    return command !== null && sightOf({ ...command, pidNs: owner.pidNs }) !== "dead" ? "live" : "dead";
  };
}

/** Whether a claim of this machine's lives where this process cannot see (another pid namespace, above or beside). */
export function isUnseen(owner: SlotProcess): boolean {
  return owner.host === hostIdentity().name && sightOf(owner) === "unseen";
}
