import { backendNamed } from "../backends/backend-registry.js";
import { type AccountView, accountsView } from "../dispatch/accounts-view.js";
import { CatherdError } from "../domain/errors.js";
import { accountNameSchema } from "../domain/quota/quota-schemas.js";
import type { BackendId } from "../domain/vocab.js";
import { catherdHome } from "../infra/paths.js";
import { addAccount, removeAccount } from "../quota/account-changes.js";
import { type Command, stringOption } from "./command-io.js";
import { renderAccounts } from "./quota-text.js";

// `catherd account add|list|remove` (specs/quota.md, "Accounts"): the accounts a home declares, each a
// CLI's configuration folder under a name, and what catherd knows of their windows.

type AccountResult =
  | { accounts: AccountView[] }
  | { added: { backend: BackendId; name: string; dir: string } }
  | { removed: { backend: BackendId; name: string } };

const USAGE_FIX =
  "catherd account add <name> --backend <cli> --dir <folder> | catherd account list | catherd account remove <name> --backend <cli>";

export const accountCommand: Command<AccountResult> = {
  name: "account",
  synopsis: "add <name> | list | remove <name>",
  positionals: "many",
  summary:
    "Declares an account of a CLI — its configuration folder (CLAUDE_CONFIG_DIR, CODEX_HOME, gemini's " +
    "GEMINI_CLI_HOME, opencode's XDG_DATA_HOME), logged in by you beforehand — under a name that " +
    "`dispatch --account` takes; lists each account with its windows as its CLI last reported them and " +
    "what waits for it; forgets one (its folder is left as it is). catherd never copies, moves or " +
    "refreshes a credential: it only runs the CLI with the folder chosen.",
  json: "{accounts: [{backend, name, dir, windows, gate, waiting}]} | {added: {…}} | {removed: {…}}",
  options: {
    backend: { type: "string", value: "<cli>", description: "the CLI the account is of (add, remove)" },
    dir: { type: "string", value: "<folder>", description: "the account's configuration folder (add)" },
  },
  async handler(input) {
    const home = catherdHome();
    const [sub, name, ...extra] = input.positionals;
    if (sub === "list" && name === undefined) {
      const accounts = accountsView(home, Date.now());
      return { data: { accounts }, text: renderAccounts(accounts, Date.now()) };
    }
    if ((sub !== "add" && sub !== "remove") || name === undefined || extra.length > 0) {
      throw new CatherdError(
        "E_INPUT_INVALID",
        `catherd account ${input.positionals.join(" ")}: not a use of it`,
        {
          fix: USAGE_FIX,
        },
      );
    }
    const backend = backendOf(stringOption(input, "backend"));
    const accountName = checkedName(name);
    if (sub === "remove") {
      if (!(await removeAccount(home, backend, accountName))) {
        throw new CatherdError("E_INPUT_INVALID", `${backend} has no account ${accountName}`, {
          fix: "catherd account list",
        });
      }
      return {
        data: { removed: { backend, name: accountName } },
        text: `removed ${backend} account ${accountName}\n`,
      };
    }
    const dir = stringOption(input, "dir");
    if (dir === undefined)
      throw new CatherdError("E_INPUT_INVALID", "account add needs --dir", { fix: USAGE_FIX });
    const added = await addAccount(home, { backend, name: accountName, dir }, new Date());
    const text = `added ${backend} account ${added.name}: ${added.dir}\n  dispatch with --account ${added.name} (or --account auto)\n`;
    return { data: { added: { backend, name: added.name, dir: added.dir } }, text };
  },
};

function backendOf(text: string | undefined): BackendId {
  const backend = text === undefined ? null : backendNamed(text);
  if (backend === null || backend.accountVariable === undefined) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `--backend ${JSON.stringify(text ?? "")}: not a CLI with accounts`,
      {
        fix: "give --backend codex, claude-code, gemini or opencode",
      },
    );
  }
  return backend.id;
}

function checkedName(name: string): string {
  const parsed = accountNameSchema.safeParse(name);
  if (!parsed.success) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `account name ${JSON.stringify(name.slice(0, 80))} is not a name`,
      {
        fix: "use 1-40 of a-z 0-9 . _ -, starting with a letter or digit",
      },
    );
  }
  return parsed.data;
}
