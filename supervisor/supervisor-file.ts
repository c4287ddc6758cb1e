import type { BootStamp } from "../src/domain/watch/boot-clock.js";
import { FILES } from "../src/folder/layout.js";
import { type JsonWriter, writeFolderJson } from "../src/folder/write.js";
import { hostIdentity } from "../src/infra/host-identity.js";
import { startTimeOf } from "../src/infra/process-identity.js";

// supervisor.json's one writer (specs/dispatch-folder.md): a first supervisor and an adopter name
// themselves here. Loads no schema: it runs before the supervisor has loaded the rest of itself.

/** When this supervisor started, and what it carries over from the dispatch's first one. */
export interface SupervisorStart {
  startedAt: Date;
  startedMono: BootStamp;
  /** How many supervisors took the dispatch over, this one included: 0 for the first. */
  adoptions: number;
  firstStartedAt: string;
  /** Null when no supervisor before recorded it: the field is then left out. */
  firstStartedMono: BootStamp | null;
}

/** Writes supervisor.json naming this process (pid, start time, host): readers judge the dispatch by it. */
export function nameThisProcess(dir: string, start: SupervisorStart, files: JsonWriter): void {
  writeFolderJson(
    dir,
    FILES.supervisor,
    {
      pid: process.pid,
      startTime: startTimeOf(process.pid),
      host: hostIdentity(),
      startedAt: start.startedAt.toISOString(),
      startedMono: start.startedMono,
      adoptions: start.adoptions,
      firstStartedAt: start.firstStartedAt,
      ...(start.firstStartedMono === null ? {} : { firstStartedMono: start.firstStartedMono }),
    },
    files,
  );
}
