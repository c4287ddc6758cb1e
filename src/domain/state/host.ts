// Identity across hosts (specs/placement.md, "Identity across hosts"). A process is (its host, its pid,
// its start time), never a bare pid: a pid and a start time mean something only in the PID namespace and
// the boot they were read in. A reader looks at a process through its own /proc only where the process
// was recorded in the same boot of the same kernel and the same PID namespace.

/** Where a process ran: the host's name, its boot, its PID namespace. */
export interface HostIdentity {
  /** The host name (uname -n) as the process saw it: what a person reads; it decides nothing alone. */
  name: string;
  /** /proc/sys/kernel/random/boot_id: one boot of one kernel; null where the platform has none. */
  bootId: string | null;
  /** The inode of /proc/self/ns/pid: the PID namespace pids are counted in; null where unknown. */
  pidNamespace: string | null;
}

/**
 * How the host a process was recorded on stands to the reader's:
 * - `same`: the same boot and PID namespace, so its pid and start time can be looked up in the reader's
 *   /proc, and it may be signalled or adopted;
 * - `rebooted`: the same host name, another boot: the process ended with the boot, whatever its pid;
 * - `other`: another host, container or PID namespace: its pid means nothing here; it is judged only by
 *   its lock and by the engine, never signalled, never adopted.
 *
 * A process recorded without a host (a folder written before hosts were recorded) counts as `same`, as
 * it always did. Without a boot id on either side (not Linux) the names decide.
 */
export type HostRelation = "same" | "rebooted" | "other";

export function hostRelation(recorded: HostIdentity | undefined, reader: HostIdentity): HostRelation {
  if (recorded === undefined) return "same";
  if (recorded.bootId === null || reader.bootId === null) {
    return recorded.name === reader.name && recorded.pidNamespace === reader.pidNamespace ? "same" : "other";
  }
  if (recorded.bootId !== reader.bootId) return recorded.name === reader.name ? "rebooted" : "other";
  return recorded.pidNamespace === reader.pidNamespace ? "same" : "other";
}

/** Whether the reader may look a recorded process up in its /proc, signal it or adopt its agent. */
export function mayTouchProcesses(relation: HostRelation): boolean {
  return relation === "same";
}
