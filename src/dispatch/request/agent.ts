import * as fs from "node:fs";
import * as path from "node:path";
import { backendFor } from "../../backends/backend-registry.js";
import type { Backend } from "../../backends/types.js";
import { checked } from "../../domain/checked.js";
import { CatherdError } from "../../domain/errors.js";
import type { OptionSpec } from "../../domain/option-def.js";
import { accessSchema, backendIdSchema, type LadderFile } from "../../domain/schemas.js";
import { ACCESS_LEVELS, type AccessLevel, BACKEND_IDS } from "../../domain/vocab.js";
import { notExecutableBecause, resolveExecutable } from "../../infra/which.js";
import { nextAttemptCore } from "./agent-successor.js";
import type { Concern, FixedByTurn } from "./concern.js";
import { check, ID_RULE, idText, invalid, oneLine, shownValue } from "./text.js";

// The request's core (specs/dispatch.md §1): which CLI runs (--backend, --bin, the command after --), as
// what (--name, --run), where (--cwd, --owns), how (--model, --effort, --access, --thread, --env), and
// --follow-up. It is settled first: the other concerns read its backend, folder and --env names.

export interface RawAgentInput {
  backend?: string | undefined;
  name?: string | undefined;
  run: string;
  cwd?: string | undefined;
  model?: string | undefined;
  effort?: string | undefined;
  access?: string | undefined;
  thread?: string | undefined;
  owns?: string | undefined;
  env?: readonly string[] | undefined;
  bin?: string | undefined;
  /** Arguments after `--`: for exec the command, else extra arguments for the CLI. */
  rest: readonly string[];
  environment: NodeJS.ProcessEnv;
}

export interface AgentRequest {
  backend: Backend;
  name: string | null;
  run: string;
  cwd: string;
  model: string | null;
  effort: string | null;
  access: AccessLevel | null;
  thread: string | null;
  owns: string[];
  env: Record<string, string>;
  bin: string;
  extraArgs: string[];
}

export const AGENT_OPTIONS: OptionSpec = {
  backend: {
    type: "string",
    value: "<backend>",
    description: "the agent CLI to run, or exec for any command",
    choices: BACKEND_IDS,
    default: "required; with --follow-up, its turn's",
  },
  name: { type: "string", value: "<n>", description: "name of the dispatch", default: "<backend>-<suffix>" },
  run: {
    type: "string",
    value: "<r>",
    description: "run to admit it into",
    default: "$CATHERD_RUN, else default",
  },
  cwd: {
    type: "string",
    value: "<dir>",
    description: "working folder of the agent",
    default: "the current folder",
  },
  model: {
    type: "string",
    value: "<m>",
    description: "the model the CLI should use",
    default: "the CLI's own",
  },
  effort: { type: "string", value: "<e>", description: "reasoning effort, for CLIs that take one" },
  access: {
    type: "string",
    value: "<level>",
    description: "what the CLI may do",
    choices: ACCESS_LEVELS,
    default: "the CLI's own",
  },
  thread: { type: "string", value: "<id>", description: "continue this thread (session) id of the CLI" },
  "follow-up": {
    type: "string",
    value: "<name>",
    description:
      "continue the conversation of this recorded dispatch of the run as its next turn: same name, CLI, model, effort, access, folder or worktree, and thread",
  },
  owns: {
    type: "string",
    value: "<a/,b.ts>",
    description:
      "paths this dispatch owns, comma separated; a live dispatch owning an overlapping one refuses it",
    list: "comma",
  },
  env: {
    type: "string",
    value: "<NAME=value>",
    multiple: true,
    description: "an explicit override for the agent (written to spec.json: no secrets)",
  },
  bin: {
    type: "string",
    value: "<path>",
    description: "the CLI's executable",
    default:
      "$CATHERD_<BACKEND>_BIN (CATHERD_CODEX_BIN, CATHERD_CLAUDE_BIN, CATHERD_OPENCODE_BIN, CATHERD_GEMINI_BIN), else the CLI on PATH",
  },
};

/** The core's flags a follow-up takes from its turn (concern.ts, `fromTurn`). */
export const AGENT_FROM_TURN: Readonly<Record<string, FixedByTurn>> = {
  thread: "thread",
  cwd: "place and CLI",
};

/**
 * The core as a concern: its flags and checks; its fields of admit.json (`cwd` and `name` are staging's:
 * the placed folder, the name with its default) and of a chain's ladder (`thread` is the chain's own, as
 * it was first given: chain.ts); what a chain's next attempt takes over. A follow-up is validated from its
 * turn's values given as flags instead (agent-successor.ts): they are checked as a new dispatch's are.
 */
export const agent = {
  options: AGENT_OPTIONS,
  fromTurn: AGENT_FROM_TURN,
  validate: (raw) => validateAgent(raw),
  toAdmit: ({ run, backend, model, owns, access, effort }) => ({
    run,
    backend: backend.id,
    model,
    owns,
    access,
    effort,
  }),
  toPlan: ({ bin, model, effort, access, thread, extraArgs }) => ({
    bin,
    model,
    effort,
    access,
    thread,
    extraArgs,
  }),
  toLadder: ({ cwd, effort, access, env, extraArgs }) => ({
    cwd,
    effort,
    access,
    envNames: Object.keys(env),
    extraArgs,
  }),
  carry: (recorded, to) => (to.kind === "follow-up" ? {} : nextAttemptCore(recorded, to.backend)),
} satisfies Concern<RawAgentInput, AgentRequest>;

/** admit.json's ladder's `rung`: the CLI this attempt runs, which a timed retry runs again. */
export function rungOf({ backend, model, bin }: AgentRequest): LadderFile["rung"] {
  return { backend: backend.id, model, bin };
}

/** The request's core, every field checked in the order a refusal names the first problem. */
export function validateAgent(raw: RawAgentInput): AgentRequest {
  const backend = backendOf(raw.backend);
  const idFix = "give a name such as fix-tests or nightly.2";
  const name =
    raw.name === undefined ? null : check(idText, raw.name, { field: "--name", rule: ID_RULE, fix: idFix });
  const run = check(idText, raw.run, {
    field: "--run",
    rule: ID_RULE.replace("a name", "a run's name"),
    fix: idFix,
  });
  const cwd = validateCwd(raw.cwd ?? process.cwd());
  const access =
    raw.access === undefined
      ? null
      : check(accessSchema, raw.access, {
          field: "--access",
          rule: `the levels are ${ACCESS_LEVELS.join(", ")}`,
          fix: `give --access ${ACCESS_LEVELS.join("|")}`,
        });
  const thread = raw.thread === undefined ? null : validateThread(backend, raw.thread);
  const { bin, extraArgs } = resolveBin(backend, raw);
  return {
    backend,
    name,
    run,
    cwd,
    model: text("--model", raw.model),
    effort: text("--effort", raw.effort),
    access,
    thread,
    owns: parseOwns(raw.owns),
    env: parseEnv(raw.env ?? []),
    bin,
    extraArgs,
  };
}

function backendOf(given: string | undefined): Backend {
  if (given === undefined)
    throw invalid(
      "--backend",
      "is required (unless --follow-up names the dispatch to continue)",
      `catherd dispatch --backend ${BACKEND_IDS.join("|")} …`,
    );
  const id = checked(
    backendIdSchema,
    given,
    () =>
      new CatherdError(
        "E_INPUT_INVALID",
        `unknown --backend ${shownValue(given)}: the backends are ${BACKEND_IDS.join(", ")}`,
        { fix: `give --backend one of ${BACKEND_IDS.join(", ")}` },
      ),
  );
  return backendFor(id);
}

/** One short line (--model, --effort), or null when not given. */
function text(field: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  return check(oneLine, value, {
    field,
    rule: "it is one line of 1-200 characters",
    fix: `give ${field} as one short line`,
  });
}

/** `--thread`: one short line in the form of the backend's thread ids (backends.md), else E_INPUT_INVALID. */
function validateThread(backend: Backend, given: string): string {
  const fix = "give the thread id the CLI printed (thread.json or `catherd show` of the dispatch to resume)";
  const thread = check(oneLine, given, {
    field: "--thread",
    rule: "it is one line of 1-200 characters",
    fix,
  });
  if (backend.checkThread === undefined)
    throw invalid("--thread", `is not supported by --backend ${backend.id}`, "leave --thread out");
  const problem = backend.checkThread(thread);
  if (problem !== null) throw invalid("--thread", `is not a ${backend.id} thread: ${problem}`, fix);
  return thread;
}

function validateCwd(cwd: string): string {
  const resolved = path.resolve(cwd);
  const stat = fs.statSync(resolved, { throwIfNoEntry: false });
  if (stat === undefined)
    throw invalid("--cwd", `${resolved} does not exist`, "give an existing folder as --cwd");
  if (!stat.isDirectory())
    throw invalid("--cwd", `${resolved} is not a folder`, "give a folder as --cwd, not a file");
  return resolved;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function parseEnv(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    const name = eq === -1 ? pair : pair.slice(0, eq);
    if (eq === -1 || !ENV_NAME.test(name)) {
      throw invalid(
        "--env",
        `${JSON.stringify(pair.slice(0, 80))} is not NAME=value`,
        "give --env NAME=value with NAME of A-Z a-z 0-9 _",
      );
    }
    const value = pair.slice(eq + 1);
    if (/[\0\n\r]/.test(value))
      throw invalid("--env", `${name} has a newline or NUL in its value`, "give a one-line value");
    if (name === "CATHERD_DISPATCH" || name === "CATHERD_RUN") {
      throw invalid(
        "--env",
        `${name} is set by catherd`,
        "leave CATHERD_DISPATCH and CATHERD_RUN to catherd",
      );
    }
    env[name] = value;
  }
  return env;
}

/** `--owns a/,b.ts`: paths relative to the work tree; a trailing `/` is a folder covering what is under it. */
function parseOwns(given: string | undefined): string[] {
  if (given === undefined) return [];
  const owns = given
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  for (const p of owns) {
    if (path.isAbsolute(p) || p.split("/").includes("..") || /[\0\n]/.test(p)) {
      throw invalid(
        "--owns",
        `${JSON.stringify(p)} must be a relative path inside the work tree`,
        "give paths like src/,README.md",
      );
    }
  }
  return owns;
}

function resolveBin(backend: Backend, raw: RawAgentInput): { bin: string; extraArgs: string[] } {
  let wanted =
    raw.bin ??
    raw.environment[backend.binEnv] ??
    (backend.defaultBin === "" ? undefined : backend.defaultBin);
  let extraArgs = [...raw.rest];
  if (backend.command === "args" && raw.bin === undefined) {
    wanted = raw.rest[0];
    extraArgs = raw.rest.slice(1);
    if (wanted === undefined)
      throw invalid(
        "command",
        `is required for --backend ${backend.id}`,
        `catherd dispatch --backend ${backend.id} -- <command> [args…]`,
      );
  }
  const found = wanted === undefined ? null : resolveExecutable(wanted, raw.environment.PATH ?? "");
  if (found !== null) return { bin: found, extraArgs };
  // A CLI not found here keeps its name: readiness refuses it here (readiness.ts), or its host answers
  // for it when the dispatch is placed on another (specs/placement.md, "Readiness on the host").
  if (backend.command === "cli" && wanted !== undefined) return { bin: wanted, extraArgs };
  const program = wanted ?? backend.defaultBin;
  throw new CatherdError(
    "E_BACKEND_MISSING",
    `${backend.id}: cannot run ${JSON.stringify(program)}: ${notExecutableBecause(program, raw.environment.PATH ?? "")}`,
    {
      fix:
        backend.command === "args"
          ? "check the command after --"
          : `install it, or point --bin or ${backend.binEnv} at it (catherd doctor)`,
    },
  );
}
