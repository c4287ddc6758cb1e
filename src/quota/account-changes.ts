import * as fs from "node:fs";
import * as path from "node:path";
import { CatherdError } from "../domain/errors.js";
import type { Account, AccountsFile } from "../domain/quota/quota-schemas.js";
import { SCHEMA_VERSION } from "../domain/schema-version.js";
import type { BackendId } from "../domain/vocab.js";
import { makeDir, writeJsonAtomic } from "../infra/atomic.js";
import { lockWithin } from "../infra/lock.js";
import { DEFAULT_ACCOUNT, RESERVED_NAMES, readAccounts } from "./accounts.js";
import { accountsFile, accountsLock } from "./home-files.js";

// Declaring and forgetting accounts (`catherd account add|remove`, specs/quota.md, "Accounts"): accounts.json
// rewritten whole under accounts.lock. Apart from the reading (accounts.ts), which every dispatch may do,
// so that a dispatch never loads the lock to read.

/** Declares an account: its folder must exist; a name taken for the CLI is refused. */
export async function addAccount(
  home: string,
  account: Omit<Account, "addedAt">,
  at: Date,
): Promise<Account> {
  if (RESERVED_NAMES.has(account.name)) {
    throw new CatherdError("E_INPUT_INVALID", `the account name ${account.name} is reserved`, {
      fix: `pick another name: ${DEFAULT_ACCOUNT} is the CLI's own configuration, auto asks catherd to pick`,
    });
  }
  const dir = path.resolve(account.dir);
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    throw new CatherdError("E_INPUT_INVALID", `${dir} is not a folder`, {
      fix: "give the CLI's configuration folder of that account (log the CLI in with it first)",
    });
  }
  const added: Account = { backend: account.backend, name: account.name, dir, addedAt: at.toISOString() };
  await rewriteAccounts(home, (accounts) => {
    if (accounts.some((a) => a.backend === added.backend && a.name === added.name)) {
      throw new CatherdError("E_INPUT_INVALID", `${added.backend} already has an account ${added.name}`, {
        fix: `remove it first (catherd account remove ${added.name} --backend ${added.backend}), or pick another name`,
      });
    }
    return [...accounts, added];
  });
  return added;
}

/** Forgets an account (its folder is left as it is); true when there was one. */
export async function removeAccount(home: string, backend: BackendId, name: string): Promise<boolean> {
  let removed = false;
  await rewriteAccounts(home, (accounts) => {
    const kept = accounts.filter((a) => !(a.backend === backend && a.name === name));
    removed = kept.length !== accounts.length;
    return kept;
  });
  return removed;
}

/** Rewrites accounts.json whole under accounts.lock, from what it holds now. */
async function rewriteAccounts(home: string, change: (accounts: Account[]) => Account[]): Promise<void> {
  makeDir(home);
  const release = await lockWithin({ lockPath: accountsLock(home), staleMs: 10_000, waitMs: 5_000 });
  try {
    const next: AccountsFile = { schema: SCHEMA_VERSION, accounts: change(readAccounts(home)) };
    writeJsonAtomic(accountsFile(home), next);
  } finally {
    await release().catch(() => {});
  }
}
