import { checked } from "../../domain/checked.js";
import { CatherdError } from "../../domain/errors.js";
import { envName } from "../../domain/schemas.js";

// The dispatch flags about where and with what the agent works: --worktree [--base], --pass-env, --keep-tmp.

export interface IsolationRequest {
  /** Run in a new git worktree of the repository that holds --cwd, branched from `base` (a ref). */
  worktree: { base: string } | null;
  /** Variables the agent gets from the dispatcher's environment by name; their values are never written. */
  passEnv: string[];
  /** Keep the private temp folder after the stop. */
  keepTmp: boolean;
}

export interface RawIsolationInput {
  worktree: boolean;
  base?: string | undefined;
  passEnv: string[];
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
