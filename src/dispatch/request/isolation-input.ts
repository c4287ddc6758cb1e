import { checked } from "../../domain/checked.js";
import { CatherdError } from "../../domain/errors.js";
import { envName } from "../../domain/schemas.js";
import type { Concern } from "./concern.js";

// The dispatch flags about where and with what the agent works: --worktree [--base], --pass-env, --keep-tmp.

export interface IsolationRequest {
  /** Run in a new git worktree of the repository that holds --cwd, branched from `base` (a ref). */
  worktree: { base: string } | null;
  /** Variables the agent gets from the dispatcher's environment by name; their values are never written. */
  passEnv: string[];
  /** Keep the private temp folder after the stop. */
  keepTmp: boolean;
}

/** The isolation flags as given. */
export interface RawIsolationFlags {
  worktree?: boolean | undefined;
  base?: string | undefined;
  passEnv?: readonly string[] | undefined;
  keepTmp?: boolean | undefined;
}

export interface RawIsolationInput {
  worktree: boolean;
  base?: string | undefined;
  passEnv: readonly string[];
  keepTmp: boolean;
  /** The names given to --env: a variable comes by value or by name, not both. */
  envNames: readonly string[];
  environment: NodeJS.ProcessEnv;
}

const SET_BY_CATHERD = new Set(["CATHERD_DISPATCH", "CATHERD_RUN"]);

/** Validates the isolation flags before anything is written. */
export function validateIsolation(raw: RawIsolationInput): IsolationRequest {
  if (raw.base !== undefined && !raw.worktree) {
    throw invalid("--base", "needs --worktree", "add --worktree, or drop --base");
  }
  const base = raw.base ?? "HEAD";
  if (base === "" || base.startsWith("-") || /[\0\n\r]/.test(base)) {
    throw invalid(
      "--base",
      `${JSON.stringify(base.slice(0, 80))} is not a git ref`,
      "give a branch, tag or commit",
    );
  }
  const passEnv = [...new Set(raw.passEnv)];
  for (const name of passEnv) {
    checked(envName, name, () =>
      invalid(
        "--pass-env",
        `${JSON.stringify(name.slice(0, 80))} is not a variable name`,
        "give NAME of A-Z a-z 0-9 _",
      ),
    );
    if (SET_BY_CATHERD.has(name)) {
      throw invalid(
        "--pass-env",
        `${name} is set by catherd`,
        "leave CATHERD_DISPATCH and CATHERD_RUN to catherd",
      );
    }
    if (raw.envNames.includes(name)) {
      throw invalid(
        "--pass-env",
        `${name} is also given to --env`,
        `give ${name} by value (--env) or by name (--pass-env), not both`,
      );
    }
    if (raw.environment[name] === undefined) {
      throw invalid(
        "--pass-env",
        `${name} is not set in this environment`,
        `export ${name} before dispatching, or drop --pass-env ${name}`,
      );
    }
  }
  return { worktree: raw.worktree ? { base } : null, passEnv, keepTmp: raw.keepTmp };
}

function invalid(field: string, message: string, fix: string): CatherdError {
  return new CatherdError("E_INPUT_INVALID", `${field} ${message}`, { fix });
}

/** The isolation concern: its flags, its part of the request, of spec.json and of a chain's ladder. */
export const isolation = {
  options: {
    "pass-env": {
      type: "string",
      value: "<NAME>",
      multiple: true,
      description:
        "the agent gets this variable's value from here (only the name is written, never the value)",
    },
    worktree: {
      type: "boolean",
      description: "run in a new git worktree of --cwd's repository, on branch catherd/<name>-<suffix>",
    },
    base: { type: "string", value: "<ref>", description: "the worktree's starting point", default: "HEAD" },
    "keep-tmp": {
      type: "boolean",
      description: "keep the agent's private temp folder (<dir>/tmp) after it ends",
    },
  },
  fromTurn: { worktree: "place and CLI", base: "place and CLI" },
  validate: (raw, context) => ({
    isolation: validateIsolation({
      worktree: raw.worktree === true,
      base: raw.base,
      passEnv: raw.passEnv ?? [],
      keepTmp: raw.keepTmp === true,
      envNames: context.envNames,
      environment: context.environment,
    }),
  }),
  // spec.json's `worktree` is the placed one (admit/workplace.ts): where, not whether.
  toSpec: ({ isolation: { passEnv, keepTmp } }) => ({ passEnv, keepTmp }),
  toLadder: ({ isolation: { worktree, passEnv, keepTmp } }) => ({ worktree, passEnv, keepTmp }),
  // A chain's attempts are isolated alike; a follow-up works in its turn's place (dispatch/follow-up/).
  carry: ({ ladder }, to) =>
    ladder === null || to.kind === "follow-up"
      ? {}
      : {
          isolation: {
            worktree: ladder.request.worktree,
            passEnv: ladder.request.passEnv,
            keepTmp: ladder.request.keepTmp,
          },
        },
} satisfies Concern<RawIsolationFlags, { isolation: IsolationRequest }>;
