import * as fs from "node:fs";
import * as path from "node:path";
import type { AccountWindow } from "../domain/quota/gate.js";
import { type AccountStateFile, accountStateFileSchema } from "../domain/quota/quota-schemas.js";
import { SCHEMA_VERSION } from "../domain/schema-version.js";
import { MAX_WINDOWS } from "../domain/spend/quota.js";
import type { BackendId } from "../domain/vocab.js";
import { makeDir, writeJsonAtomic } from "../infra/atomic.js";
import { okValue, readJsonFile } from "../infra/json-file.js";
import { lockWithin } from "../infra/lock.js";
import { accountStateFile, accountStateLock } from "./home-files.js";

// An account's windows as the home keeps them (specs/quota.md, "What the home knows of an account"): what
// every dispatch on it saw, merged — for each window the report seen last wins — by many supervisors at
// once, each under the account's lock, the file replaced whole.

/** An account of a CLI, as the home's state names it. */
export interface AccountKey {
  backend: BackendId;
  account: string;
}

/** The account's windows as last merged; none when nothing was ever reported (or the file is unreadable). */
export function readAccountWindows(home: string, key: AccountKey): AccountWindow[] {
  const read = okValue(
    readJsonFile(accountStateFile(home, key.backend, key.account), accountStateFileSchema),
  );
  return (read?.windows ?? []).map(withStatus);
}

/** A window as read from a file, its status null where the file gives none (a file of an older catherd). */
export function withStatus<W extends { status?: AccountWindow["status"] | undefined }>(
  w: W,
): W & { status: AccountWindow["status"] } {
  return { ...w, status: w.status ?? null };
}

const windowKey = (w: AccountWindow) => `${w.limit}\u0000${w.window}`;

/**
 * Merges `reported` (each stamped with when it was seen, and by whom) into the account's windows: a window
 * replaces the kept one of the same limit and name unless the kept one was seen later (supervisors write in
 * any order). At most MAX_WINDOWS are kept, the ones seen last.
 */
export function mergeAccountWindows(
  kept: readonly AccountWindow[],
  reported: readonly AccountWindow[],
): AccountWindow[] {
  const byKey = new Map(kept.map((w) => [windowKey(w), w]));
  for (const w of reported) {
    const old = byKey.get(windowKey(w));
    if (old !== undefined && Date.parse(old.seenAt) > Date.parse(w.seenAt)) continue;
    byKey.set(windowKey(w), w);
  }
  return [...byKey.values()]
    .sort((a, b) => Date.parse(b.seenAt) - Date.parse(a.seenAt))
    .slice(0, MAX_WINDOWS);
}

/** How long a writer waits for the account's lock: a merge takes a millisecond or two. */
const ACCOUNT_LOCK_WAIT_MS = 5_000;

/** Merges `reported` into the account's state file, under its lock. */
export async function recordAccountWindows(
  home: string,
  key: AccountKey,
  reported: readonly AccountWindow[],
): Promise<void> {
  if (reported.length === 0) return;
  const file = accountStateFile(home, key.backend, key.account);
  makeDir(path.dirname(file));
  const release = await lockWithin({
    lockPath: accountStateLock(home, key.backend, key.account),
    staleMs: 10_000,
    waitMs: ACCOUNT_LOCK_WAIT_MS,
  });
  try {
    const next: AccountStateFile = {
      schema: SCHEMA_VERSION,
      backend: key.backend,
      account: key.account,
      windows: mergeAccountWindows(readAccountWindows(home, key), reported),
    };
    writeJsonAtomic(file, next);
  } finally {
    await release().catch(() => {});
  }
}

/**
 * Every account's windows the home knows, by `accountKey` ("codex/work"): what admission and promotion
 * judge by. A home where nothing was reported costs one failed directory read.
 */
export function readWindowBook(home: string): Map<string, AccountWindow[]> {
  const book = new Map<string, AccountWindow[]>();
  const root = path.join(home, "quota");
  for (const backend of listDir(root)) {
    for (const file of listDir(path.join(root, backend))) {
      if (!file.endsWith(".json") || file.startsWith(".")) continue;
      const read = okValue(readJsonFile(path.join(root, backend, file), accountStateFileSchema));
      if (read !== null && read.backend === backend) {
        book.set(`${backend}/${read.account}`, read.windows.map(withStatus));
      }
    }
  }
  return book;
}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
