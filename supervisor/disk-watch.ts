import type { DiskFull } from "../src/domain/watch/disk.js";
import { diskFullOf, fullDisk } from "../src/infra/disk-space.js";
import type { SupervisorLog } from "./log.js";

/**
 * Whether the dispatch's folder can still keep the agent's output (specs/supervisor.md, "A full disk").
 * The agent writes events.jsonl and stderr.log itself, so its ENOSPC never reaches the supervisor: the
 * loop asks statfs at every poll instead, and hears of every write of its own the disk refused
 * (ENOSPC, EDQUOT, EIO: what statfs cannot see). Once full, it stays full: the dispatch ends.
 */
export class DiskWatch {
  private found: DiskFull | null = null;

  constructor(
    private readonly dir: string,
    private readonly log: SupervisorLog,
  ) {}

  /** The full disk found so far, looking at the file system now. */
  look(): DiskFull | null {
    if (this.found === null) this.note(fullDisk(this.dir), "statfs");
    return this.found;
  }

  /** A write of the supervisor's failed: a full disk if its error says so. */
  refused(error: unknown, file: string): void {
    if (this.found === null) this.note(diskFullOf(error, this.dir), file);
  }

  private note(full: DiskFull | null, seenBy: string): void {
    if (full === null) return;
    this.found = full;
    this.log("disk-full", { code: full.code, place: full.place, seenBy });
  }
}
