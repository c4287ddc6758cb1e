import * as fs from "node:fs";
import * as path from "node:path";
import { type LockReportFile, lockReportFileSchema } from "../domain/lock/lock-schemas.js";
import { SCHEMA_VERSION } from "../domain/schemas.js";
import { writeJsonAtomic } from "../infra/atomic.js";
import { readJsonFile } from "../infra/json-file.js";
import { sightOf } from "../infra/namespaced-process.js";
import { FILES } from "./layout.js";

// The reports a `catherd lock` run by a dispatch's agent leaves in the dispatch folder (specs/lock.md,
// "Inside a dispatch"): `lock-<pid>-<startTime>.json`, one per lock process, written while it waits for
// a slot and while its command runs, removed when it ends. The supervisor, `status`, `show` and `wait`
// read them; a report whose writer is gone (pid and start time, in its pid namespace) is ignored.

const REPORT_FILE = /^lock-\d+-[0-9A-Za-z]+\.json$/;

/** Whether an entry of a dispatch folder is a lock's report. */
export function isLockReportName(name: string): boolean {
  return REPORT_FILE.test(name);
}

/**
 * Where the lock process `pid` (started at `startTime`) reports for the dispatch folder `dir`: in its
 * `locks/` folder where the supervisor made one (a sandboxed dispatch: the folder itself is read-only to the
 * agent, specs/sandbox.md), else in the folder.
 */
export function lockReportPath(dir: string, pid: number, startTime: string | null): string {
  // A start time of digits (Linux) or of ps's words: only its letters and digits go into the name.
  const stamp = (startTime ?? "unknown").replace(/[^0-9A-Za-z]/g, "") || "unknown";
  const reports = path.join(dir, FILES.lockReports);
  return path.join(fs.existsSync(reports) ? reports : dir, `lock-${pid}-${stamp}.json`);
}

export type LockReport = Omit<LockReportFile, "schema">;

/** Writes (or rewrites) a lock's report, whole. */
export function writeLockReport(file: string, report: LockReport): void {
  writeJsonAtomic(file, { schema: SCHEMA_VERSION, ...report });
}

/** A report read back, with the file it came from. */
export interface ReadReport {
  file: string;
  report: LockReportFile;
}

/**
 * The reports in `dir` whose lock still lives (by pid and start time), and the files of those that do
 * not. A report that cannot be read (torn, hand-broken, not a file) is skipped: it is advisory.
 */
export function readLockReports(dir: string): { live: ReadReport[]; dead: string[] } {
  const live: ReadReport[] = [];
  const dead: string[] = [];
  const files = [dir, path.join(dir, FILES.lockReports)].flatMap((folder) => {
    try {
      return fs
        .readdirSync(folder)
        .filter(isLockReportName)
        .map((name) => path.join(folder, name));
    } catch {
      return [];
    }
  });
  for (const file of files) {
    const read = readJsonFile(file, lockReportFileSchema);
    if (read.kind !== "ok") continue;
    const { pid, startTime, pidNs } = read.value;
    // A lock in a namespace this reader cannot see (it reads from inside another sandbox) counts as live.
    if (sightOf({ pid, startTime, pidNs: pidNs ?? null }) !== "dead") live.push({ file, report: read.value });
    else dead.push(file);
  }
  return { live, dead };
}
