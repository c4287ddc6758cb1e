import { CatherdError } from "../domain/errors.js";
import { type Account, accountsFileSchema } from "../domain/quota/quota-schemas.js";
import type { BackendId } from "../domain/vocab.js";
import { readJsonFile } from "../infra/json-file.js";
import { accountsFile } from "./home-files.js";

// The accounts a home declares (specs/quota.md, "Accounts"), as read: each a CLI's configuration folder
// under a name (account-changes.ts declares and forgets them). catherd only runs the CLI with the folder chosen; it never copies, moves or refreshes what the
// folder holds. `default` is every CLI's own configuration as the dispatcher's environment names it.

/** The account of a CLI that is always there: its configuration as the environment gives it. */
export const DEFAULT_ACCOUNT = "default";
/** Names an account may not take: `default` is the CLI's own, `auto` asks for a pick. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([DEFAULT_ACCOUNT, "auto"]);

/** The accounts declared in `home`; a missing file declares none, a broken one is an error with its fix. */
export function readAccounts(home: string): Account[] {
  const read = readJsonFile(accountsFile(home), accountsFileSchema);
  if (read.kind === "missing") return [];
  if (read.kind === "invalid") {
    throw new CatherdError("E_INPUT_INVALID", `${accountsFile(home)}: ${read.error.message}`, {
      fix: `mend the file by hand, or remove it and declare the accounts again (catherd account add)`,
    });
  }
  return read.value.accounts;
}

/** The accounts of one CLI, `default` first (its dir null: the environment's own). */
export function accountsOf(home: string, backend: BackendId): { name: string; dir: string | null }[] {
  const declared = readAccounts(home).filter((a) => a.backend === backend);
  return [{ name: DEFAULT_ACCOUNT, dir: null }, ...declared.map((a) => ({ name: a.name, dir: a.dir }))];
}
