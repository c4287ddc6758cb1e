import { okValue } from "../infra/json-file.js";
import { FILES } from "./layout.js";
import { readFolderJson } from "./read.js";

/**
 * The variable that gives the CLI its account's folder (account.json, specs/quota.md), as the agent's
 * environment gets it over spec.json's: none for `default` (the environment's own) or no account.
 */
export function accountEnvironment(dir: string): Record<string, string> {
  const account = okValue(readFolderJson(dir, FILES.account));
  if (account?.dir == null || account.variable == null) return {};
  return { [account.variable]: account.dir };
}
