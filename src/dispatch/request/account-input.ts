import type { Backend } from "../../backends/types.js";
import type { AccountAsk } from "../../domain/admission/admission-rules.js";
import { CatherdError } from "../../domain/errors.js";
import { DEFAULT_HEADROOM_PERCENT } from "../../domain/quota/gate.js";
import { accountNameSchema } from "../../domain/quota/quota-schemas.js";
import { readRunFile } from "../../folder/run-file.js";
import { catherdHome, runPaths } from "../../infra/paths.js";
import { accountsOf, DEFAULT_ACCOUNT } from "../../quota/accounts.js";
import type { Concern, ConcernContext, Recorded, Successor } from "./concern.js";
import { invalid, shownValue } from "./text.js";

// `dispatch --account NAME|auto|A,B`, `--run-account` and `--window-headroom N%` (specs/quota.md): the
// accounts a dispatch may run on — one pinned, every account of its CLI, or a pool named; the run's, for
// every dispatch of it that names none — and how much of a window it leaves to people. A follow-up runs on the account its turn ran on (its conversation lives in that account's
// folder); a chain's next attempt on the same CLI keeps the pool, on another CLI takes that CLI's default.

export interface RawAccountInput {
  account?: string | undefined;
  runAccount?: string | undefined;
  windowHeadroom?: string | undefined;
}

export interface AccountRequest {
  /** The accounts it may run on and its headroom; null for a backend without accounts (`exec`). */
  accounts: AccountAsk | null;
  /** `--run-account` to remember in run.json (`none` forgets it); null: not given. */
  runAccount: string | null;
}

/** The most accounts a pool names. */
const MAX_POOL = 100;

export const accountChoice = {
  options: {
    account: {
      type: "string",
      value: "<name|auto|a,b>",
      description:
        "the account of the CLI to run on (catherd account list): a name, auto for any of the CLI's accounts with headroom (the one whose window resets soonest first), or a pool of names; out of window, the dispatch waits in the queue for the reset",
      default: "the run's (--run-account), else $CATHERD_ACCOUNT, else default (the CLI's own configuration)",
    },
    "run-account": {
      type: "string",
      value: "<name|auto|a,b|none>",
      description:
        "the accounts of every dispatch of the run that names none, remembered in run.json (none forgets them)",
      default: "the run's, else none",
    },
    "window-headroom": {
      type: "string",
      value: "<percent>",
      description: "start no work into a window used this much or more (1-100)",
      default: `${DEFAULT_HEADROOM_PERCENT}%`,
    },
  },
  validate: (raw, context) => {
    const runAccount = raw.runAccount === undefined ? null : checkedPool(raw.runAccount);
    const home = catherdHome(context.environment);
    const asked = withDefault(raw, context, runAccount ?? rememberedAccount(home, context.run));
    return { accounts: askOf(asked, context.backend, home, context.envNames), runAccount };
  },
  toAdmit: ({ accounts }) => (accounts === null ? {} : { accounts }),
  carry: carryAccount,
  anew: ["account", "window-headroom"],
} satisfies Concern<RawAccountInput, AccountRequest>;

/** What a follow-up or a next attempt runs on (see the module's comment). */
function carryAccount(recorded: Recorded, to: Successor): Partial<AccountRequest> {
  if (to.backend.accountVariable === undefined) return { accounts: null, runAccount: null };
  const asked = recorded.admit?.accounts;
  const headroomPercent = asked?.headroomPercent ?? DEFAULT_HEADROOM_PERCENT;
  if (to.kind === "follow-up") {
    const ranOn = recorded.record?.account ?? asked?.pool[0] ?? DEFAULT_ACCOUNT;
    return { accounts: { pool: [ranOn], headroomPercent }, runAccount: null };
  }
  const sameCli = recorded.admit?.backend === to.backend.id;
  return {
    accounts: { pool: sameCli && asked !== undefined ? asked.pool : [DEFAULT_ACCOUNT], headroomPercent },
    runAccount: null,
  };
}

/**
 * `--account` as given, else the run's (`--run-account` now, else run.json's; `none` forgets it), else
 * `$CATHERD_ACCOUNT` (an orchestrator's pool for every dispatch it makes), for a CLI that has accounts; a
 * backend without (exec) ignores the run's and the variable, never the flag.
 */
function withDefault(raw: RawAccountInput, context: ConcernContext, runs: string | null): RawAccountInput {
  if (raw.account !== undefined || context.backend.accountVariable === undefined) return raw;
  const fallback = runs !== null && runs !== "none" ? runs : context.environment.CATHERD_ACCOUNT;
  return fallback === undefined || fallback === "" ? raw : { ...raw, account: fallback };
}

/** The run's remembered accounts (run.json `account`), or null; read without the run's lock. */
function rememberedAccount(home: string, run: string): string | null {
  return readRunFile(runPaths(home, run))?.account ?? null;
}

/** `--run-account`: `none`, `auto`, or names of accounts joined by commas (checked per CLI when used). */
function checkedPool(text: string): string {
  const names = text.split(",").map((n) => n.trim());
  const fix = "give --run-account auto, none, or account names joined by commas (catherd account list)";
  if (names.length > MAX_POOL) {
    throw invalid("--run-account", `names ${names.length} accounts: at most ${MAX_POOL}`, fix);
  }
  for (const name of names) {
    if (name !== "none" && !accountNameSchema.safeParse(name).success) {
      throw invalid("--run-account", `${shownValue(name)} is not an account's name`, fix);
    }
  }
  return names.join(",");
}

function askOf(
  raw: RawAccountInput,
  backend: Backend,
  home: string,
  envNames: readonly string[],
): AccountAsk | null {
  const headroomPercent = headroomOf(raw.windowHeadroom);
  const variable = backend.accountVariable;
  if (variable === undefined) {
    if (raw.account === undefined) return null;
    throw invalid(
      "--account",
      `cannot be given to ${backend.id}: it runs a command, which has no account`,
      "leave --account out",
    );
  }
  if (raw.account === undefined) return { pool: [DEFAULT_ACCOUNT], headroomPercent };
  const known = accountsOf(home, backend.id).map((a) => a.name);
  const pool = raw.account === "auto" ? known : poolNamed(raw.account, known, backend);
  if (envNames.includes(variable) && pool.some((name) => name !== DEFAULT_ACCOUNT)) {
    throw invalid(
      "--env",
      `${variable}: the account chooses ${backend.id}'s configuration folder`,
      `leave --env ${variable} out, or --account out`,
    );
  }
  return { pool, headroomPercent };
}

/** `--account a,b`: names of the CLI's accounts, each once. */
function poolNamed(text: string, known: readonly string[], backend: Backend): string[] {
  const names = text.split(",").map((n) => n.trim());
  const fix = `give an account of ${backend.id} (catherd account list), auto, or names joined by commas`;
  if (names.length > MAX_POOL)
    throw invalid("--account", `names ${names.length} accounts: at most ${MAX_POOL}`, fix);
  for (const name of names) {
    if (!known.includes(name)) {
      throw new CatherdError(
        "E_INPUT_INVALID",
        `--account ${shownValue(name)}: ${backend.id} has no such account`,
        { fix },
      );
    }
  }
  return [...new Set(names)];
}

/** `--window-headroom 90` or `90%`: a whole percent from 1 to 100. */
function headroomOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_HEADROOM_PERCENT;
  const match = /^([0-9]{1,3})%?$/.exec(text.trim());
  const value = Number(match?.[1]);
  if (match === null || value < 1 || value > 100) {
    throw invalid(
      "--window-headroom",
      `${shownValue(text)}: a percent from 1 to 100`,
      "give --window-headroom 90%, say",
    );
  }
  return value;
}
