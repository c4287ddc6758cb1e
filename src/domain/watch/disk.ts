// A disk that can no longer keep a dispatch's files (specs/supervisor.md, "A full disk"): which refusals
// say so, and the words the ending and the readers give it.

/** The errno codes that say the file system holding a folder cannot keep what is written to it. */
export const DISK_FULL_CODES = ["ENOSPC", "EDQUOT", "EIO"] as const;
export type DiskFullCode = (typeof DISK_FULL_CODES)[number];

/** A full (or failing) file system as a supervisor or a reader found it. */
export interface DiskFull {
  code: DiskFullCode;
  /** Where: the file system's mount point and type ("/mnt/x (tmpfs)"), else the folder. */
  place: string;
}

/** True for an errno code of DISK_FULL_CODES. */
export function isDiskFullCode(code: unknown): code is DiskFullCode {
  return (DISK_FULL_CODES as readonly unknown[]).includes(code);
}

/** "no space left on /mnt/x (tmpfs)", "disk quota exceeded on …", "I/O error on …". */
export function diskFullWords(full: DiskFull): string {
  switch (full.code) {
    case "ENOSPC":
      return `no space left on ${full.place}`;
    case "EDQUOT":
      return `disk quota exceeded on ${full.place}`;
    case "EIO":
      return `I/O error on ${full.place}`;
  }
}

/** The ending's message for a dispatch the supervisor stopped (or never started) for its disk. */
export function diskEndingMessage(full: DiskFull, agentStarted: boolean): string {
  const what = agentStarted
    ? "the agent's output could no longer be kept, so catherd stopped it"
    : "the agent's output could not be kept, so catherd did not start it";
  return `${diskFullWords(full)}: ${what}`;
}

/** What a reader says of a write the disk refused: "the disk is full: no space left on …". */
export function diskStateWords(full: DiskFull): string {
  return `${full.code === "EIO" ? "the disk is failing" : "the disk is full"}: ${diskFullWords(full)}`;
}
