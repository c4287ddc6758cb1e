import { type AccountWindow, endingWindow } from "../src/domain/quota/gate.js";
import type { RecordFile } from "../src/domain/schemas.js";
import { FILES, runOf } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import { okValue } from "../src/infra/json-file.js";
import { recordAccountWindows, withStatus } from "../src/quota/account-state.js";

// What a dispatch tells its account's state in the home (specs/quota.md, "What the home knows of an
// account"): the windows its CLI reported (quota.json), and the window of its ending. Written by its
// supervisor as its record is made, before the record frees its slot — so that no promotion, its own
// promoter's or a reader's, starts the run's queued work for the account into the wall this one hit.

/** Merges what the dispatch of `dir` saw into its account's state; nothing for a dispatch without one. */
export async function reportToAccount(dir: string, record: RecordFile | null): Promise<void> {
  const run = runOf(dir);
  const account = okValue(readFolderJson(dir, FILES.account));
  if (run === null || account === null) return;
  const by = record?.dispatchId ?? null;
  const seen: AccountWindow[] = (okValue(readFolderJson(dir, FILES.quota))?.windows ?? []).map((w) => ({
    ...withStatus(w),
    by,
  }));
  const ended =
    record === null
      ? null
      : endingWindow({
          kind: record.error?.kind ?? null,
          retryAfter: record.error?.retryAfter ?? null,
          startedAt: record.startedAt,
          endedAt: record.endedAt,
        });
  if (ended !== null) seen.push({ ...ended, by });
  await recordAccountWindows(run.home, { backend: account.backend, account: account.name }, seen);
}
