import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { backendFor } from "../../backends/backend-registry.js";
import type { Backend } from "../../backends/types.js";
import type { Rung } from "../../domain/admission/ladder.js";
import { checked } from "../../domain/checked.js";
import { CatherdError } from "../../domain/errors.js";
import { ID_PATTERN } from "../../domain/ids.js";
import type { SandboxPolicy } from "../../domain/sandbox/sandbox.js";
import type { SteerSettings } from "../../domain/schemas.js";
import {
  accessSchema,
  backendIdSchema,
  notifyCommandSchema,
  type WorktreePlan,
} from "../../domain/schemas.js";
import type { SpendCaps } from "../../domain/spend/budget.js";
import type { RunBudget } from "../../domain/spend/run-budget.js";
import { parseDuration } from "../../domain/text/duration.js";
import { parseSize } from "../../domain/text/size.js";
import {
  ACCESS_LEVELS,
  type AccessLevel,
  BACKEND_IDS,
  type BackendId,
  type EngineName,
} from "../../domain/vocab.js";
import { notExecutableBecause, resolveExecutable } from "../../infra/which.js";
import type { AnswerRequest } from "./answer-input.js";
import { validateCaps, validateRunBudget } from "./caps-input.js";
import { type IsolationRequest, validateIsolation } from "./isolation-input.js";
import { type PlacementRequest, parsePlacement } from "./placement.js";
import { parseSandbox, type SandboxRequest } from "./sandbox-input.js";
import { parseSteer } from "./steer-input.js";

/** The largest brief accepted: larger ones belong in a file in the work tree that the brief names. */
export const MAX_BRIEF_BYTES = 4 * 1024 * 1024;

/**
 * The refusal of a brief over MAX_BRIEF_BYTES, from any source (`what`: "brief", "--brief-file x", "the
 * brief on stdin"), with its size when it is known; a stream is drained only a bounded way past the limit
 * (infra/capped-read.ts), so its size is not.
 */
export function briefTooLong(what: string, size: number | null): CatherdError {
  const limit = `the ${MAX_BRIEF_BYTES}-byte (4 MiB) limit of a brief`;
  return invalid(
    what,
    size === null ? `is over ${limit}` : `is ${size} bytes, over ${limit}`,
    "put long material in a file in the work tree and name it in the brief",
  );
}

/** `--retry-within` at most: the supervisor of a rate-limited attempt stays that long for its retry. */
export const MAX_RETRY_WITHIN_MS = 24 * 3600_000;

/** A dispatch request, every field validated; nothing has touched the disk yet. */
export interface DispatchRequest {
  backend: Backend;
  name: string | null;
  run: string;
  cwd: string;
  model: string | null;
  effort: string | null;
  access: AccessLevel | null;
  /** A cap of live dispatches in the run to remember; `none` removes the remembered one. */
  maxParallel: number | "none" | null;
  /** `--max-parallel-backend codex=3`, per backend. */
  maxParallelBackend: Partial<Record<BackendId, number>>;
  /** `--run-budget`: the run's budget to remember (it replaces the one before), `none` to remove it. */
  runBudget: RunBudget | "none" | null;
  /** `--queue`: wait in the run's queue where admission would refuse for a cap or an overlap. */
  queue: boolean;
  env: Record<string, string>;
  brief: Buffer | null;
  thread: string | null;
  owns: string[];
  idleMs: number | null;
  wallMs: number | null;
  killGraceMs: number | null;
  /** --memory: the cap on the dispatch's cgroup, where the machine gives it one. */
  memoryBytes: number | null;
  /** --max-procs: the cap on its processes, where the machine gives it a cgroup. */
  maxProcs: number | null;
  bin: string;
  extraArgs: string[];
  isolation: IsolationRequest;
  /** --max-tokens and --max-cost: the caps the supervisor stops the agent at. */
  caps: SpendCaps;
  /**
   * Where its supervisor runs (specs/placement.md). `placement.placement` is `--placement` as given until
   * the dispatch use case resolves it (the run's, the environment's, else local) before admission.
   */
  placement: PlacementRequest;
  /**
   * `--fallback` and `--retry-within`, and where this attempt stands in its chain (specs/dispatch.md, "The
   * failover ladder"); null for a dispatch given neither (it is attempt 1 of a chain of one).
   */
  chain: ChainRequest | null;
  /** `--notify`: run once when the dispatch (a chain: the chain) is recorded; absent or null: none. */
  notify?: string | null;
  /** `--run-notify`: remembered in run.json; null removes it (`none`); absent: run.json's stays. */
  runNotify?: string | null;
  /** `--outcome`: the brief carries the outcome contract, and the record reads the outcome line. */
  outcome?: boolean;
  /** `--answer-schema` and `--repair` (answer-input.ts); absent or null: no schema. */
  answer?: AnswerRequest | null;
  /** `--follow-up NAME`: the turn this dispatch continues (dispatch/follow-up/); absent or null: none. */
  followUp?: FollowUpOf | null;
  /** `--steerable`, `--keep-open`, `--on-question` (steer-input.ts); absent or null: not steerable. */
  steer?: SteerSettings | null;
  /**
   * `--sandbox`, `--run-sandbox` and what shapes the fence (sandbox-input.ts), as given; the dispatch use
   * case resolves it against the run into `fence` before admission.
   */
  sandbox: SandboxRequest;
  /** The fence the agent runs in, once resolved; absent or null: none. */
  fence?: SandboxPolicy | null;
}

/** The turn a follow-up continues (dispatch/follow-up/), as admission and its supervisor need it. */
export interface FollowUpOf {
  /** The continued turn's dispatch id: admit.json's `followUpOf`. */
  dispatchId: string;
  dir: string;
  /** The conversation's private worktree (the first turn's `--worktree`), worked in again; null: none. */
  worktree: WorktreePlan | null;
}

/** The chain a dispatch belongs to, as admission writes it into admit.json. */
export interface ChainRequest {
  /** The rungs not yet tried, in order. */
  rungs: Rung[];
  retryWithinMs: number | null;
  /** Timed retries of this attempt's rung before it. */
  retries: number;
  attempt: number;
  failoverFrom: string | null;
  /** Not to start before this time (a timed retry): it is admitted queued until then. */
  notBefore: string | null;
  /** `--thread` as the chain was given it: repeated only on the same backend. */
  thread: string | null;
  /** Repair turns left for an answer that does not fit --answer-schema; absent: 0. */
  repairs?: number;
}

/** The flags as the command line gave them. */
export interface RawDispatchInput {
  backend?: string | undefined;
  name?: string | undefined;
  run: string;
  cwd?: string | undefined;
  model?: string | undefined;
  effort?: string | undefined;
  access?: string | undefined;
  maxParallel?: string | undefined;
  maxParallelBackend?: string[] | undefined;
  runBudget?: string | undefined;
  queue?: boolean | undefined;
  env: string[];
  brief: Buffer | null;
  thread?: string | undefined;
  owns?: string | undefined;
  idle?: string | undefined;
  wall?: string | undefined;
  killGrace?: string | undefined;
  memory?: string | undefined;
  maxProcs?: string | undefined;
  bin?: string | undefined;
  worktree?: boolean | undefined;
  base?: string | undefined;
  passEnv?: string[] | undefined;
  keepTmp?: boolean | undefined;
  fallback?: string[] | undefined;
  retryWithin?: string | undefined;
  maxTokens?: string | undefined;
  maxCost?: string | undefined;
  notify?: string | undefined;
  runNotify?: string | undefined;
  placement?: string | undefined;
  runPlacement?: string | undefined;
  /** Each engine's options flag (`--slurm-opt`), by engine. */
  engineOptions?: Partial<Record<EngineName, string[]>> | undefined;
  outcome?: boolean | undefined;
  /** `--answer-schema`/`--repair`, already read and checked (answer-input.ts: the check is async). */
  answer?: AnswerRequest | null;
  steerable?: boolean | undefined;
  keepOpen?: string | undefined;
  onQuestion?: string | undefined;
  sandbox?: string | undefined;
  runSandbox?: string | undefined;
  allowWrite?: string[] | undefined;
  denyRead?: string[] | undefined;
  allowNet?: string[] | undefined;
  rest: string[];
  environment: NodeJS.ProcessEnv;
}

const id = z
  .string()
  .regex(ID_PATTERN)
  .refine((v) => !v.includes(".."), "must not contain ..");
const freeText = z
  .string()
  .min(1)
  .max(200)
  .refine((v) => !/[\0\n\r]/.test(v), "must be one line without NUL");
const envName = /^[A-Za-z_][A-Za-z0-9_]*$/;

function invalid(field: string, message: string, fix: string): CatherdError {
  return new CatherdError("E_INPUT_INVALID", `${field} ${message}`, { fix });
}

/**
 * The value when `schema` takes it, else E_INPUT_INVALID stating the rule it broke, in catherd's words
 * (the schema library's own are for programmers): `--name "a/b" is not a name: <rule>`.
 */
function check<T>(field: string, schema: z.ZodType<T>, value: unknown, rule: string, fix: string): T {
  return checked(schema, value, () => invalid(field, `${shown(value)}: ${rule}`, fix));
}

/** A value as an error quotes it: short, one line. */
function shown(value: unknown): string {
  const text = String(value);
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

/** The rule of names and runs (specs/dispatch.md §1). */
export const ID_RULE =
  "a name is 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit, and never ..";

/** Validates every input of `catherd dispatch` before anything is written (specs/dispatch.md §1). */
export function validateDispatch(raw: RawDispatchInput): DispatchRequest {
  if (raw.backend === undefined)
    throw invalid(
      "--backend",
      "is required (unless --follow-up names the dispatch to continue)",
      `catherd dispatch --backend ${BACKEND_IDS.join("|")} …`,
    );
  const backendId = checked(
    backendIdSchema,
    raw.backend,
    () =>
      new CatherdError(
        "E_INPUT_INVALID",
        `unknown --backend ${shown(raw.backend)}: the backends are ${BACKEND_IDS.join(", ")}`,
        { fix: `give --backend one of ${BACKEND_IDS.join(", ")}` },
      ),
  );
  const backend = backendFor(backendId);
  const idFix = "give a name such as fix-tests or nightly.2";
  const name = raw.name === undefined ? null : check("--name", id, raw.name, ID_RULE, idFix);
  const run = check("--run", id, raw.run, ID_RULE.replace("a name", "a run's name"), idFix);
  const cwd = validateCwd(raw.cwd ?? process.cwd());
  const text = (field: string, value: string | undefined) =>
    value === undefined
      ? null
      : check(
          field,
          freeText,
          value,
          "it is one line of 1-200 characters",
          `give ${field} as one short line`,
        );
  const access =
    raw.access === undefined
      ? null
      : check(
          "--access",
          accessSchema,
          raw.access,
          `the levels are ${ACCESS_LEVELS.join(", ")}`,
          `give --access ${ACCESS_LEVELS.join("|")}`,
        );
  const maxParallel = parseMaxParallel(raw.maxParallel);
  const maxProcs =
    raw.maxProcs === undefined
      ? null
      : check(
          "--max-procs",
          wholeNumber(8, 4_194_304),
          raw.maxProcs,
          "it is a whole number of processes from 8 to 4194304",
          "give a whole number from 8 (an agent CLI and its shell need a few)",
        );
  const thread = raw.thread === undefined ? null : validateThread(backend, raw.thread);
  const brief = validateBrief(raw.brief, backend);
  const duration = (field: string, value: string | undefined) =>
    value === undefined ? null : parseDuration(field, value);
  const killGraceMs = raw.killGrace === undefined ? null : parseKillGrace(raw.killGrace);
  const { bin, extraArgs } = resolveBin(backend, raw);
  const env = parseEnv(raw.env);
  const isolation = validateIsolation({
    worktree: raw.worktree === true,
    base: raw.base,
    passEnv: raw.passEnv ?? [],
    keepTmp: raw.keepTmp === true,
    envNames: Object.keys(env),
    environment: raw.environment,
  });
  if (raw.queue === true && isolation.passEnv.length > 0) {
    // A queued dispatch is started by whichever catherd process promotes it — most often another
    // dispatch's supervisor, with that dispatcher's environment — and values are never written down.
    throw invalid(
      "--pass-env",
      "cannot wait in the queue: a queued dispatch is started by whichever catherd process promotes it, whose environment is not this one",
      "dispatch without --queue (and again on E_ADMIT_CAPACITY or E_ADMIT_OVERLAP), or drop --pass-env",
    );
  }
  const placement = parsePlacement({
    placement: raw.placement,
    runPlacement: raw.runPlacement,
    engineOptions: raw.engineOptions,
    environment: raw.environment,
  });
  const rungs = parseFallback(raw.fallback ?? [], raw.environment);
  const retryWithinMs =
    raw.retryWithin === undefined ? null : parseDuration("--retry-within", raw.retryWithin);
  if (retryWithinMs !== null && retryWithinMs > MAX_RETRY_WITHIN_MS) {
    throw invalid("--retry-within", `${raw.retryWithin} is over a day`, "give at most 24h");
  }
  const answer = raw.answer ?? null;
  if (answer !== null && backend.id === "exec") {
    throw invalid(
      "--answer-schema",
      "is for an agent's final answer; exec runs a command",
      "leave out --answer-schema, or check the command's output yourself",
    );
  }
  // A repair turn is the next attempt of a chain: a dispatch that may need one always carries a ladder.
  const repairs = answer?.repair ?? 0;
  const chain: ChainRequest | null =
    rungs.length === 0 && retryWithinMs === null && repairs === 0
      ? null
      : {
          rungs,
          retryWithinMs,
          retries: 0,
          attempt: 1,
          failoverFrom: null,
          notBefore: null,
          thread,
          repairs,
        };
  return {
    backend,
    name,
    run,
    cwd,
    model: text("--model", raw.model),
    effort: text("--effort", raw.effort),
    access,
    maxParallel,
    maxParallelBackend: parseBackendCaps(raw.maxParallelBackend ?? []),
    runBudget: validateRunBudget(raw.runBudget),
    queue: raw.queue === true,
    env,
    brief,
    thread,
    owns: parseOwns(raw.owns),
    idleMs: duration("--idle", raw.idle),
    wallMs: duration("--wall", raw.wall),
    killGraceMs,
    memoryBytes: raw.memory === undefined ? null : parseSize("--memory", raw.memory),
    maxProcs,
    bin,
    extraArgs,
    isolation,
    caps: validateCaps(raw, backend),
    placement,
    chain,
    notify: raw.notify === undefined ? null : notifyCommand("--notify", raw.notify),
    answer,
    ...(raw.runNotify === undefined
      ? {}
      : { runNotify: raw.runNotify === "none" ? null : notifyCommand("--run-notify", raw.runNotify) }),
    ...(raw.outcome === true ? { outcome: true } : {}),
    ...steerField(parseSteer(raw, backend)),
    sandbox: parseSandbox({
      sandbox: raw.sandbox,
      runSandbox: raw.runSandbox,
      allowWrite: raw.allowWrite,
      denyRead: raw.denyRead,
      allowNet: raw.allowNet,
      cwd,
      environment: raw.environment,
    }),
  };
}

function steerField(steer: SteerSettings | null): Pick<DispatchRequest, "steer"> {
  return steer === null ? {} : { steer };
}

/** A notification command: a shell command line (`sh -c`), at most 8 KiB, no NUL. */
function notifyCommand(field: string, text: string): string {
  return check(
    field,
    notifyCommandSchema.refine((v) => v.trim() !== ""),
    text,
    "it is a shell command line of at most 8 KiB, not blank, without NUL",
    `give ${field} a shell command, e.g. ${field} 'notify-send "catherd: $CATHERD_NAME $CATHERD_STATUS"'`,
  );
}

/**
 * `--fallback claude-code:claude-sonnet-4-5,gemini` (repeatable, comma-separated): the rungs of the
 * ladder, each a CLI backend with an optional model, its executable found now (CATHERD_<B>_BIN, else
 * PATH) so that a rung that could never start is refused before anything is written. `exec` is no rung:
 * its command is the dispatch's own.
 */
function parseFallback(values: readonly string[], environment: NodeJS.ProcessEnv): Rung[] {
  const fix = `give --fallback <backend>[:<model>][,…], backend one of ${BACKEND_IDS.filter((b) => b !== "exec").join(", ")}`;
  const rungs: Rung[] = [];
  for (const item of values.flatMap((v) => v.split(","))) {
    const text = item.trim();
    const colon = text.indexOf(":");
    const id = colon === -1 ? text : text.slice(0, colon);
    const model = colon === -1 ? null : text.slice(colon + 1);
    const notCli = () =>
      invalid("--fallback", `${JSON.stringify(text.slice(0, 80))} is not a CLI backend`, fix);
    const parsed = checked(backendIdSchema, id, notCli);
    if (parsed === "exec") throw notCli();
    if (model !== null) {
      checked(freeText, model, () =>
        invalid("--fallback", `${JSON.stringify(text.slice(0, 80))} has no model after the colon`, fix),
      );
    }
    const backend = backendFor(parsed);
    const wanted = environment[backend.binEnv] ?? backend.defaultBin;
    const bin = resolveExecutable(wanted, environment.PATH ?? "");
    if (bin === null) {
      throw new CatherdError(
        "E_BACKEND_MISSING",
        `--fallback ${backend.id}: cannot run ${JSON.stringify(wanted)}: ${notExecutableBecause(wanted, environment.PATH ?? "")}`,
        {
          fix: `install it, or point ${backend.binEnv} at it (catherd doctor), or leave it out of --fallback`,
        },
      );
    }
    rungs.push({ backend: backend.id, model, bin });
  }
  if (rungs.length > 8) throw invalid("--fallback", `has ${rungs.length} rungs`, "give at most 8");
  return rungs;
}

/** `--thread`: one short line in the form of the backend's thread ids (backends.md), else E_INPUT_INVALID. */
function validateThread(backend: Backend, text: string): string {
  const fix = "give the thread id the CLI printed (thread.json or `catherd show` of the dispatch to resume)";
  const thread = check("--thread", freeText, text, "it is one line of 1-200 characters", fix);
  if (backend.checkThread === undefined)
    throw invalid("--thread", `is not supported by --backend ${backend.id}`, "leave --thread out");
  const problem = backend.checkThread(thread);
  if (problem !== null) throw invalid("--thread", `is not a ${backend.id} thread: ${problem}`, fix);
  return thread;
}

/** `--max-parallel-backend codex=3` (repeatable): a cap of live dispatches per backend within the run. */
function parseBackendCaps(pairs: readonly string[]): Partial<Record<BackendId, number>> {
  const caps: Partial<Record<BackendId, number>> = {};
  const fix = `give --max-parallel-backend <backend>=<n>, backend one of ${BACKEND_IDS.join(", ")}, n from 1 to 10000`;
  for (const pair of pairs) {
    const [backend, n, extra] = pair.split("=");
    const refuse = () =>
      invalid("--max-parallel-backend", `${JSON.stringify(pair.slice(0, 80))} is not <backend>=<n>`, fix);
    const id = checked(backendIdSchema, backend, refuse);
    const cap = Number(n);
    if (extra !== undefined || !/^[0-9]+$/.test(n ?? "") || cap < 1 || cap > 10_000) throw refuse();
    caps[id] = cap;
  }
  return caps;
}

/** A whole number from `min` to `max`, written in digits (no sign, no exponent, no fraction). */
function wholeNumber(min: number, max: number) {
  return z
    .string()
    .regex(/^[0-9]{1,12}$/)
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}

/**
 * `--max-parallel <n>`: a cap of live dispatches in the run, remembered in run.json; `none` removes the
 * remembered cap (0 is refused: a run that may run nothing is a mistake, not a cap). Null: not given.
 */
function parseMaxParallel(text: string | undefined): number | "none" | null {
  if (text === undefined) return null;
  if (text === "none") return "none";
  return check(
    "--max-parallel",
    wholeNumber(1, 10_000),
    text,
    "it is a whole number from 1 to 10000, or none",
    "give --max-parallel <n>, or --max-parallel none to remove the run's cap",
  );
}

function parseKillGrace(text: string): number {
  if (text === "0" || text === "0s" || text === "0ms") return 0;
  return parseDuration("--kill-grace", text);
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

/**
 * The brief: required for an agent CLI, optional for exec; given, it is non-empty and not only white space
 * (an empty `--brief ""` is refused as `"   "` is: one rule, for every backend), UTF-8 without NUL, at
 * most MAX_BRIEF_BYTES.
 */
function validateBrief(brief: Buffer | null, backend: Backend): Buffer | null {
  const fix = "give --brief <text>, --brief-file <path>, or the brief on stdin";
  if (brief === null) {
    if (backend.needsBrief) throw invalid("brief", "is required", fix);
    return null;
  }
  if (brief.length === 0) throw invalid("brief", "is empty", fix);
  if (brief.length > MAX_BRIEF_BYTES) throw briefTooLong("brief", brief.length);
  if (brief.includes(0) || !isUtf8(brief)) {
    throw invalid("brief", "is not UTF-8 text (binary data or NUL bytes)", "give the brief as UTF-8 text");
  }
  if (brief.toString("utf8").trim() === "") {
    throw invalid(
      "brief",
      "is only white space",
      "give --brief <text>, --brief-file <path>, or the brief on stdin",
    );
  }
  return brief;
}

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function parseEnv(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    const name = eq === -1 ? pair : pair.slice(0, eq);
    if (eq === -1 || !envName.test(name)) {
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
function parseOwns(text: string | undefined): string[] {
  if (text === undefined) return [];
  const owns = text
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

function resolveBin(backend: Backend, raw: RawDispatchInput): { bin: string; extraArgs: string[] } {
  let wanted =
    raw.bin ??
    raw.environment[backend.binEnv] ??
    (backend.defaultBin === "" ? undefined : backend.defaultBin);
  let extraArgs = raw.rest;
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
  if (found === null) {
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
  return { bin: found, extraArgs };
}
