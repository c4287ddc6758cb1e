import * as fs from "node:fs";
import { makeDir } from "../infra/atomic.js";
import { bytesUnder, removeMeasured } from "../infra/disk-usage.js";
import { FILES, fileIn } from "./layout.js";

// The agent's own temp folder, `<dir>/tmp` (TMPDIR, TMP and TEMP point at it): its tools' scratch files
// stay with the dispatch instead of piling up in /tmp, and no two agents see each other's.

/** Makes `<dir>/tmp`, mode 0700, before the agent starts; returns its path. */
export function makePrivateTemp(dir: string): string {
  const tmp = fileIn(dir, FILES.tmp);
  makeDir(tmp);
  return tmp;
}

export interface PrivateTempFate {
  path: string;
  /** How many bytes it held after the stop. */
  bytes: number;
  kept: boolean;
}

/**
 * After the stop (nothing of the agent runs any more): how many bytes the temp folder held, and it is
 * removed unless `keep`. Null when the dispatch never had one.
 */
export function settlePrivateTemp(dir: string, keep: boolean): PrivateTempFate | null {
  const tmp = fileIn(dir, FILES.tmp);
  if (!fs.existsSync(tmp)) return null;
  const bytes = keep ? bytesUnder(tmp) : removeMeasured(tmp);
  return { path: tmp, bytes, kept: keep };
}
