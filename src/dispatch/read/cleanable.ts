import * as fs from "node:fs";
import { FILES } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { bytesUnder } from "../../infra/disk-usage.js";
import { okValue } from "../../infra/json-file.js";

/**
 * Roughly what `clean` with `olderThanMs` could free in these rows' folders: the bytes of each recorded
 * dispatch that ended longer ago, with its worktree's size as its record measured it (walking worktrees
 * would make `status` slow). Work a worktree holds is not looked for: an upper bound.
 */
export function cleanableBytes(
  rows: readonly { dir: string; state: string; endedAt: string | null }[],
  now: number,
  olderThanMs: number,
): number {
  let total = 0;
  for (const row of rows) {
    const ended = Date.parse(row.endedAt ?? "");
    if (row.state !== "recorded" || !Number.isFinite(ended) || now - ended < olderThanMs) continue;
    const worktree = okValue(readFolderJson(row.dir, FILES.record))?.worktree ?? null;
    total += bytesUnder(row.dir) + (worktree !== null && fs.existsSync(worktree.path) ? worktree.bytes : 0);
  }
  return total;
}
