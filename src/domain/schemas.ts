import { z } from "zod";
import { MAX_COST_CAP_USD, MAX_TOKENS_CAP } from "./budget.js";
import { DECLARED_STATUSES } from "./declared-outcome.js";
import { MAX_BUDGET_MINUTES, RUN_BUDGET_KEYS } from "./run-budget.js";
import { netRuleSchema, SANDBOX_MODES, sandboxField } from "./sandbox.js";
import {
  bootStamp,
  host,
  isoTime,
  loose,
  ms,
  processIdentity,
  schemaField,
  startTime,
} from "./schema-parts.js";
import { supervisorFileSchema } from "./supervisor-schema.js";
import { COST_SOURCES } from "./usage.js";
import {
  ACCESS_LEVELS,
  BACKEND_IDS,
  CONTAINMENTS,
  ENDING_ERROR_CODES,
  ENGINES,
  ERROR_KINDS,
  EXIT_REASONS,
  PLACEMENTS,
  QUEUE_BLOCKERS,
  SPEC_DEFAULT_BACKEND,
  STATUSES,
} from "./vocab.js";

// The files of a dispatch folder and a run (specs/dispatch-folder.md). Each carries `schema: 1`, keeps
// fields it does not know (a newer catherd or a person may add some), and is validated on every read. The
// fields every file shares are in schema-parts.ts, and supervisor.json's schema in a module of its own:
// the supervisor's first steps read and write only that file (specs/supervisor.md, "Start").

export { loose, SCHEMA_VERSION } from "./schema-parts.js";
export { type SupervisorFile, supervisorFileSchema } from "./supervisor-schema.js";

const positiveMs = z.number().int().positive();
const positiveCount = z.number().int().positive();

export const backendIdSchema = z.enum(BACKEND_IDS);
export const exitReasonSchema = z.enum(EXIT_REASONS);
export const statusSchema = z.enum(STATUSES);
export const errorKindSchema = z.enum(ERROR_KINDS);
export const accessSchema = z.enum(ACCESS_LEVELS);
/**
 * What the engine said of a dispatch's job at its end (specs/placement.md, "The engine's words"): the
 * engine, the job, its state as the engine spells it (CANCELLED, TIMEOUT, NODE_FAIL, …) and its words.
 * Optional in `error`: only a dispatch an engine placed and ended has it.
 */
const engineWordsField = loose({
  name: z.enum(ENGINES),
  jobId: z.string().min(1),
  state: z.string().min(1),
  words: z.string(),
}).optional();
export type EngineWords = NonNullable<z.infer<typeof engineWordsField>>;

/** exit.json's and record.json's `error`: a code from a closed set (specs/record.md, "error"), a message. */
const errorField = loose({
  code: z.enum(ENDING_ERROR_CODES),
  message: z.string(),
  engine: engineWordsField,
}).nullable();

/** A variable's name, as `--env` and `--pass-env` take it. */
export const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);

/**
 * The git worktree the supervisor creates before it starts the agent: `path` on a new `branch` of the
 * repository whose top is `repo`, starting at the commit `base`.
 */
export const worktreePlanSchema = z.object({
  repo: z.string().min(1),
  path: z.string().min(1),
  branch: z.string().min(1),
  base: z.string().min(1),
});
export type WorktreePlan = z.infer<typeof worktreePlanSchema>;

/**
 * record.json's error (specs/record.md): exit.json's `{code, message}` plus why in words an orchestrator
 * can act on. The three fields are written in every record this catherd makes; a record written before
 * them reads without them.
 */
const recordErrorField = loose({
  code: z.enum(ENDING_ERROR_CODES),
  kind: errorKindSchema.optional(),
  message: z.string(),
  retryAfter: isoTime.nullable().optional(),
  tail: z.array(z.string()).optional(),
  engine: engineWordsField,
}).nullable();

/** The caps a spec.json may carry (budget.ts bounds them: a hand-written spec is held to the same). */
const maxTokensField = z.number().int().min(1).max(MAX_TOKENS_CAP);
const maxCostField = z.number().positive().max(MAX_COST_CAP_USD);

/**
 * spec.json's `answerSchema` (specs/dispatch.md, "An answer that fits a schema"): the path of the folder's
 * answer-schema.json, a copy of `--answer-schema` made at admission. Absent from older folders: no schema.
 */
const answerSchemaField = z.string().min(1).nullable();

/**
 * `dispatch --on-question` (specs/steering.md, "Questions"): what answers a question nobody answered.
 * `allow` and `deny` answer at once; `wait` gives a person `waitMs` to answer, then denies.
 */
export const QUESTION_POLICIES = ["allow", "deny", "wait"] as const;
const onQuestionSchema = loose({
  policy: z.enum(QUESTION_POLICIES),
  /** How long a question waits for a person (`wait` only; 0 for allow and deny). */
  waitMs: z.number().int().nonnegative(),
});
export type OnQuestion = z.infer<typeof onQuestionSchema>;

/**
 * spec.json's `steer` (`--steerable`, specs/steering.md): the brief and later messages reach the agent by
 * its channel; `keepOpenMs` (`--keep-open`) how long an ended turn waits for another message (null: it does
 * not wait); `onQuestion` (`--on-question`) what answers what nobody answered (null: the CLI is not asked
 * to put its questions to catherd). Absent: not steerable.
 */
const steerField = loose({
  keepOpenMs: z.number().int().positive().nullable(),
  onQuestion: onQuestionSchema.nullable(),
});
export type SteerSettings = z.infer<typeof steerField>;

/** run.json's `budget` (`--run-budget`): each limit as the flag bounds it, null when not given. */
const runBudgetSchema = loose({
  tokens: maxTokensField.nullable(),
  usd: maxCostField.nullable(),
  minutes: z.number().int().min(1).max(MAX_BUDGET_MINUTES).nullable(),
});

/**
 * spec.json as written: by `dispatch` in full, by a person possibly with just `cmd` (and `backend`).
 * Missing fields take the backend's defaults when the supervisor resolves it.
 */
export const specFileSchema = loose({
  schema: schemaField.optional(),
  dispatchId: z.string().min(1).optional(),
  backend: backendIdSchema.default(SPEC_DEFAULT_BACKEND),
  cmd: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().min(1).optional(),
  stdinPath: z.string().min(1).nullable().optional(),
  idleMs: positiveMs.optional(),
  wallMs: positiveMs.optional(),
  stallMs: positiveMs.optional(),
  killGraceMs: ms.optional(),
  graceAfterFinalMs: ms.nullable().optional(),
  pollMs: positiveMs.optional(),
  providerRetry: z.object({ attempts: positiveMs, windowMs: positiveMs }).partial().optional(),
  memoryBytes: positiveCount.nullable().optional(),
  maxProcs: positiveCount.nullable().optional(),
  worktree: worktreePlanSchema.nullable().optional(),
  passEnv: z.array(envName).optional(),
  keepTmp: z.boolean().optional(),
  maxTokens: maxTokensField.nullable().optional(),
  maxCostUsd: maxCostField.nullable().optional(),
  /** `--outcome`: the record reads the worker's outcome line (specs/record.md, "outcome"); absent: false. */
  outcome: z.boolean().optional(),
  answerSchema: answerSchemaField.optional(),
  steer: steerField.optional(),
  /** --sandbox files|files+net: the fence the agent runs in (specs/sandbox.md); absent: none. */
  sandbox: sandboxField.optional(),
});
export type SpecFile = z.infer<typeof specFileSchema>;

/** spec.json with every default applied: what the supervisor runs. */
export const specSchema = loose({
  schema: schemaField,
  dispatchId: z.string().min(1),
  backend: backendIdSchema,
  cmd: z.string().min(1),
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  cwd: z.string().min(1),
  stdinPath: z.string().min(1).nullable(),
  idleMs: positiveMs,
  wallMs: positiveMs,
  stallMs: positiveMs,
  killGraceMs: ms,
  graceAfterFinalMs: ms.nullable(),
  pollMs: positiveMs,
  providerRetry: z.object({ attempts: positiveMs, windowMs: positiveMs }),
  /** The cap on the memory of the dispatch's cgroup, swap included; null: none. */
  memoryBytes: positiveCount.nullable(),
  /** The cap on the processes (and threads) of the dispatch's cgroup; null: none. */
  maxProcs: positiveCount.nullable(),
  worktree: worktreePlanSchema.nullable(),
  passEnv: z.array(envName),
  keepTmp: z.boolean(),
  /** --max-tokens: the cap on tokens billed (specs/dispatch.md, "Caps on spending"); null: none. */
  maxTokens: maxTokensField.nullable(),
  /** --max-cost: the cap in US dollars; null: none. */
  maxCostUsd: maxCostField.nullable(),
  /** `--outcome` (absent: false). */
  outcome: z.boolean().optional(),
  /** --answer-schema: the folder's answer-schema.json, which the final answer must fit; absent: none. */
  answerSchema: answerSchemaField.optional(),
  /** --steerable: how catherd talks to the running agent (specs/steering.md); absent: it does not. */
  steer: steerField.optional(),
  /** --sandbox: the fence the agent runs in (specs/sandbox.md); absent: none. */
  sandbox: sandboxField.optional(),
});
export type Spec = z.infer<typeof specSchema>;

export const procFileSchema = loose({
  schema: schemaField,
  pid: z.number().int().positive(),
  pgid: z.number().int().positive(),
  startTime,
  host,
  startedAt: isoTime,
  /** The same instant on the boot's monotonic clock: what an adopter counts the wall from. */
  startedMono: bootStamp,
  argv0: z.string(),
});
export type ProcFile = z.infer<typeof procFileSchema>;

export const threadFileSchema = loose({
  schema: schemaField,
  thread: z.string().min(1),
  at: isoTime,
});
export type ThreadFile = z.infer<typeof threadFileSchema>;

export const stallFileSchema = loose({ schema: schemaField, at: isoTime, quietMs: ms });
export type StallFile = z.infer<typeof stallFileSchema>;

export const openToolCallSchema = loose({ id: z.string(), label: z.string(), openedAt: isoTime });

export const exitFileSchema = loose({
  schema: schemaField,
  reason: exitReasonSchema,
  code: z.number().int().nullable(),
  signal: z.string().nullable(),
  startedAt: isoTime.nullable(),
  endedAt: isoTime,
  durationMs: ms.nullable(),
  pid: z.number().int().nullable(),
  sawFinal: z.boolean(),
  thread: z.string().nullable(),
  openToolCalls: z.array(openToolCallSchema),
  retries: ms,
  lastEventAt: isoTime.nullable(),
  stalled: z.boolean(),
  stop: z.object({ term: z.boolean(), kill: z.boolean(), swept: ms }),
  error: errorField,
  /** How many supervisors took the dispatch over after the one before died. */
  adoptions: ms.default(0),
  /** How its processes were held; null when none ran under a supervisor (lost, or ended by a reader). */
  containment: z.enum(CONTAINMENTS).nullable().default(null),
  /** CPU time of every process of the dispatch, where its cgroup counted it. */
  cpuSeconds: z.number().nonnegative().nullable().default(null),
  /** The most memory its processes held at once, where its cgroup counted it. */
  peakMemoryBytes: ms.nullable().default(null),
  /** Processes of the dispatch the OOM killer killed, where its cgroup counted them. */
  oomKills: ms.nullable().default(null),
  /**
   * The kind the provider's words gave the end, as the supervisor saw it (a refusal ended early, the retry
   * that was the last sign of life); null: none. Absent in an exit.json written before it existed.
   */
  kind: errorKindSchema.nullable().optional(),
  /**
   * How long the dispatch's locks waited for heavy slots in all (specs/lock.md); null when no supervisor
   * watched it. Absent in an exit.json written before it existed.
   */
  slotWaitMs: ms.nullable().optional(),
  /**
   * A steerable dispatch: how long its ended turns waited for messages (--keep-open), neither idle nor
   * wall time (specs/steering.md). Absent: not steerable.
   */
  keptOpenMs: ms.optional(),
});
export type ExitFile = z.infer<typeof exitFileSchema>;

/**
 * The working tree at admission, as a git tree written from a private index (src/infra/git-tree.ts):
 * its top folder, where the dispatch's folder sits in it, HEAD's commit, and the tree. `tree` is absent
 * in a snapshot written by an older catherd (a status listing, kept as unknown fields): no patch then.
 */
export const gitSnapshotSchema = loose({
  root: z.string(),
  prefix: z.string().optional(),
  head: z.string().nullable(),
  tree: z.string().optional(),
});
export type GitSnapshot = z.infer<typeof gitSnapshotSchema>;

/** A notification command (`--notify`, `--run-notify`): run by `sh -c`, at most 8 KiB, no NUL. */
export const notifyCommandSchema = z
  .string()
  .min(1)
  .max(8192)
  .refine((v) => !v.includes("\0"), "must not contain NUL");

/** A rung of `--fallback`, as admit.json carries the rungs not yet tried. */
const rungSchema = z.object({
  backend: backendIdSchema,
  model: z.string().nullable(),
  bin: z.string().min(1),
});

/**
 * admit.json's `ladder` (specs/dispatch.md, "The failover ladder"): the chain's future as this attempt
 * carries it, and what each next attempt repeats of the request. Values of `--env` are not repeated here:
 * `envNames` names them, and the hand-over takes them from this attempt's spec.json.
 */
export const ladderSchema = loose({
  rungs: z.array(rungSchema),
  retryWithinMs: positiveMs.nullable(),
  retries: ms,
  /** Repair turns left to the chain (--repair) for an answer that does not fit --answer-schema; absent: 0. */
  repairs: ms.optional(),
  /** This attempt's own rung: what a timed retry runs again. */
  rung: rungSchema,
  request: loose({
    cwd: z.string().min(1),
    effort: z.string().nullable(),
    access: accessSchema.nullable(),
    thread: z.string().nullable(),
    envNames: z.array(envName),
    idleMs: positiveMs.nullable(),
    wallMs: positiveMs.nullable(),
    killGraceMs: ms.nullable(),
    memoryBytes: positiveCount.nullable(),
    maxProcs: positiveCount.nullable(),
    worktree: z.object({ base: z.string().min(1) }).nullable(),
    passEnv: z.array(envName),
    keepTmp: z.boolean(),
    /** Arguments after `--`: given again only to the same backend. */
    extraArgs: z.array(z.string()),
  }),
});

/**
 * admit.json's `placement`: the engine that runs the dispatch's supervisor as a job, and the options
 * given to it as they are (`--slurm-opt`). Absent: `local`, the supervisor runs on the dispatching host.
 */
export const admitPlacementSchema = loose({
  engine: z.enum(ENGINES),
  options: z.array(z.string()),
});
export type AdmitPlacement = z.infer<typeof admitPlacementSchema>;
export type LadderFile = z.infer<typeof ladderSchema>;

/**
 * What a follow-up (specs/dispatch.md, "Following up") reads of the turn it continues, and the link to
 * it: `access` and `effort` as the request gave them (null: the CLI's own; absent from older folders), and
 * `followUpOf`, the dispatch id of the turn this one continues (absent: it starts a conversation).
 */
const followUpAdmitShape = {
  access: accessSchema.nullable().optional(),
  effort: z.string().nullable().optional(),
  followUpOf: z.string().min(1).optional(),
};

export const admitFileSchema = loose({
  schema: schemaField,
  dispatchId: z.string().min(1),
  run: z.string().min(1),
  name: z.string().min(1),
  backend: backendIdSchema,
  model: z.string().nullable(),
  /** The agent's folder as the request named it (what people read; the agent's PWD). */
  cwd: z.string().min(1),
  /** `--owns` as given: relative to `cwd`, a trailing `/` a folder. */
  owns: z.array(z.string()),
  /**
   * `cwd` and `owns` as the file system resolves them (every symbolic link followed; a path not there yet
   * resolved through its deepest existing ancestor): what admission compared. Absent from older folders.
   */
  resolved: z.object({ cwd: z.string().min(1), owns: z.array(z.string()) }).optional(),
  admittedAt: isoTime,
  dispatcher: processIdentity,
  git: gitSnapshotSchema.nullable(),
  /** The attempt of its chain (1 for a dispatch as given; absent from older folders: 1). */
  attempt: positiveCount.optional(),
  /** The attempt before this one, which failed over (or was retried) to it; null for the first. */
  failoverFrom: z.string().min(1).nullable().optional(),
  /** Present when the dispatch was given `--fallback` or `--retry-within`. */
  ladder: ladderSchema.optional(),
  /** `--notify`: the shell command run once when the dispatch (a chain: the chain) is recorded. */
  notify: notifyCommandSchema.nullable().optional(),
  /** Present when an engine runs its supervisor (specs/placement.md); every attempt of a chain has it too. */
  placement: admitPlacementSchema.optional(),
  ...followUpAdmitShape,
});
export type AdmitFile = z.infer<typeof admitFileSchema>;

export const tokensSchema = z.object({ input: ms, cached: ms, output: ms });

/** Token counts as the provider bills them (src/domain/usage.ts, specs/record.md "usage"). */
const tokenCountsShape = {
  input: ms,
  cachedInput: ms,
  cacheWrite: ms,
  output: ms,
  reasoning: ms,
};
const costSourceSchema = z.enum(COST_SOURCES).nullable();

/** One model's use: its tokens, and its dollars with where they come from. */
const modelUsageSchema = loose({
  model: z.string().nullable(),
  ...tokenCountsShape,
  costUsd: z.number().nonnegative().nullable(),
  costSource: costSourceSchema,
});

/** record.json's and activity.json's `usage`: the total, and the same by model. */
export const usageSchema = loose({ ...tokenCountsShape, models: z.array(modelUsageSchema) });
export type UsageField = z.infer<typeof usageSchema>;

/** Why a chain goes on to a next attempt (record.json `next.why`, specs/dispatch.md §8). */
export const NEXT_WHYS = ["retry", "failover", "repair"] as const;

/** One way the answer did not fit its schema: where (a JSON Pointer into the answer, "" its root), and why. */
export const answerErrorSchema = z.object({ path: z.string(), message: z.string() });
export type AnswerError = z.infer<typeof answerErrorSchema>;

export const recordFileSchema = loose({
  schema: schemaField,
  dispatchId: z.string().min(1),
  run: z.string().nullable(),
  name: z.string().nullable(),
  backend: backendIdSchema,
  model: z.string().nullable(),
  status: statusSchema,
  reason: exitReasonSchema,
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  startedAt: isoTime.nullable(),
  endedAt: isoTime,
  secs: z.number().nonnegative().nullable(),
  thread: z.string().nullable(),
  tokens: tokensSchema,
  costUsd: z.number().nonnegative().nullable(),
  // Written by every catherd that knows them; absent from older records (usage: tokens says what was known).
  usage: usageSchema.optional(),
  /** Where costUsd comes from: the CLI's own figure, catherd's price of the tokens, or none (null). */
  costSource: costSourceSchema.optional(),
  /** The price table that priced it (with costSource `priced`), else null. */
  pricedBy: z.string().nullable().optional(),
  reply: z.string().nullable(),
  replyPath: z.string().nullable(),
  changedFiles: z.array(z.string()).nullable(),
  error: recordErrorField,
  // Written by every catherd that knows them (null when they do not apply); absent from older records.
  patch: z.object({ path: z.string(), bytes: ms }).nullable().optional(),
  worktree: loose({
    path: z.string(),
    branch: z.string(),
    base: z.string(),
    head: z.string().nullable(),
    bytes: ms,
  })
    .nullable()
    .optional(),
  commits: z
    .object({ count: ms, list: z.array(z.object({ sha: z.string(), subject: z.string() })) })
    .nullable()
    .optional(),
  tmp: z.object({ path: z.string(), bytes: ms, kept: z.boolean() }).nullable().optional(),
  attempt: positiveCount.optional(),
  failoverFrom: z.string().min(1).nullable().optional(),
  /**
   * The attempt its chain goes on to (specs/dispatch.md, "The failover ladder"), null when the chain ends
   * with this record. The hand-over admits it and writes next.json.
   */
  next: loose({
    backend: backendIdSchema,
    model: z.string().nullable(),
    notBefore: isoTime.nullable(),
    why: z.enum(NEXT_WHYS),
  })
    .nullable()
    .optional(),
  /** When it was admitted (admit.json), so that a reader of the record alone can say its age. */
  admittedAt: isoTime.nullable().optional(),
  /** Its caps on spending (spec.json), so that a reader of the record alone can set its use against them. */
  maxTokens: maxTokensField.nullable().optional(),
  maxCostUsd: maxCostField.nullable().optional(),
  /** Its last event as a human line, and when it came (activity.json at the end); null without one. */
  lastEvent: z.string().nullable().optional(),
  lastEventAt: isoTime.nullable().optional(),
  /** exit.json's `slotWaitMs`: how long the dispatch waited for heavy slots in all (specs/lock.md). */
  slotWaitMs: ms.nullable().optional(),
  /**
   * A cap of its own (--max-tokens, --max-cost) its usage reached without stopping it — the crossing came
   * with the CLI's final answer, or after it (specs/dispatch.md, "Caps on spending"); null when none did.
   */
  /**
   * With --answer-schema (specs/record.md, "The answer"): the final answer parsed and valid against the
   * schema, else null; `answerErrors` the validator's errors when it did not fit (null when it did, or when
   * the dispatch did not end ok). Absent without a schema.
   */
  answer: z.unknown().optional(),
  answerErrors: z.array(answerErrorSchema).nullable().optional(),
  capCrossed: z
    .object({
      cap: z.enum(["tokens", "cost"]),
      limit: z.number().positive(),
      used: z.number().nonnegative(),
      message: z.string(),
    })
    .nullable()
    .optional(),
  /**
   * The worker's declared outcome (`--outcome`): its last `STATUS:` line, beside `status`, never in its
   * place; null when it was asked for and the final message had none; absent when not asked for.
   */
  outcome: loose({ status: z.enum(DECLARED_STATUSES), why: z.string() })
    .nullable()
    .optional(),
  /**
   * A steerable dispatch's talk (specs/record.md, "steering"): its messages by state, what it asked and how
   * that was answered, and how long its ended turns waited for messages. Absent: not steerable.
   */
  steering: loose({
    messages: loose({ queued: ms, delivered: ms, acted: ms, failed: ms }),
    questions: loose({ asked: ms, answered: ms, byPolicy: ms, unanswered: ms }),
    keptOpenMs: ms.nullable(),
  }).optional(),
  /** A fenced dispatch's account of its fence (specs/record.md, "sandbox"). Absent: not fenced. */
  sandbox: loose({
    mode: z.enum(["files", "files+net"]),
    denied: ms,
    firstDenied: z.string().nullable(),
    refusedWrite: z.string().nullable(),
  }).optional(),
});
export type RecordFile = z.infer<typeof recordFileSchema>;

/** activity.json: what the agent is doing now, rewritten by the supervisor at most once a second. */
export const activityFileSchema = loose({
  schema: schemaField,
  at: isoTime,
  lastEvent: z.string().nullable(),
  lastEventAt: isoTime.nullable(),
  openToolCalls: z.array(openToolCallSchema),
  retrying: ms,
  retries: ms,
  tokens: tokensSchema,
  thread: z.string().nullable(),
  /** Usage so far, as record.json will hold it; the dollars only where known so far. Absent: older. */
  usage: usageSchema.optional(),
  costUsd: z.number().nonnegative().nullable().optional(),
  costSource: costSourceSchema.optional(),
  /** Time waited for heavy slots in the waits that are over: where an adopter's count starts. */
  slotWaitMs: ms.optional(),
});
export type ActivityFile = z.infer<typeof activityFileSchema>;

/**
 * queued.json: the dispatch was admitted queued (`dispatch --queue`) and waits for a slot. Written before
 * admit.json; never removed — promoted.json, written when it is started, says it is no longer waiting.
 */
export const queuedFileSchema = loose({
  schema: schemaField,
  since: isoTime,
  blockedBy: z.enum(QUEUE_BLOCKERS),
  /** What held it back when it was queued: the live dispatch it overlaps, or the cap it met. */
  blocker: loose({
    name: z.string().optional(),
    dispatchId: z.string().optional(),
    owns: z.string().optional(),
    backend: backendIdSchema.optional(),
    cap: z.number().int().positive().optional(),
    /** Held by the run's budget: which of its limits was reached, the limit, and how much was used. */
    budget: z.enum(RUN_BUDGET_KEYS).optional(),
    limit: z.number().positive().optional(),
    used: z.number().nonnegative().optional(),
  }).nullable(),
  notBefore: isoTime.nullable(),
});
export type QueuedFile = z.infer<typeof queuedFileSchema>;

/**
 * promoted.json: a queued dispatch was chosen to start, under the run's admission lock, by the process
 * named (`by`), which then starts its supervisor. Created exclusively; replaced only by a promoter that
 * takes over a promotion whose promoter died before its supervisor came up.
 */
export const promotedFileSchema = loose({ schema: schemaField, at: isoTime, by: processIdentity });
export type PromotedFile = z.infer<typeof promotedFileSchema>;

/**
 * next.json: the hand-over of a chain is done. Created exclusively under the run's admission lock, in the
 * folder of the attempt whose record names a `next`: the attempt admitted after it, or why none was (the
 * chain was cancelled, or the next attempt could not be admitted: `message` says why).
 */
export const nextFileSchema = loose({
  schema: schemaField,
  at: isoTime,
  dispatchId: z.string().min(1).nullable(),
  stopped: z.enum(["cancelled", "refused"]).nullable(),
  message: z.string().nullable(),
});
export type NextFile = z.infer<typeof nextFileSchema>;

/**
 * notify.json: the claim of a dispatch's notification (specs/dispatch-folder.md), created exclusively by
 * the notifier that runs its commands, so that they run once however many processes recorded or found it.
 */
export const notifyFileSchema = loose({
  schema: schemaField,
  at: isoTime,
  by: processIdentity,
  /** Where each command came from: the dispatch's `--notify`, the run's `--run-notify`. */
  commands: z.array(z.enum(["dispatch", "run"])),
});
export type NotifyFile = z.infer<typeof notifyFileSchema>;

export const runFileSchema = loose({
  schema: schemaField,
  id: z.string().min(1),
  createdAt: isoTime,
  maxParallel: z.number().int().positive().nullable().optional(),
  /** `--max-parallel-backend codex=3`: live dispatches per backend within the run. */
  maxParallelBackend: z.record(backendIdSchema, z.number().int().positive()).optional(),
  /** `--run-budget`: what the whole run may spend (run-budget.ts); null or absent: no budget. */
  budget: runBudgetSchema.nullable().optional(),
  /** `--run-notify`: the shell command run once when any dispatch of the run is recorded. */
  notify: notifyCommandSchema.nullable().optional(),
  /** `--run-placement`: where the run's dispatches go when `--placement` does not say. */
  placement: z.enum(PLACEMENTS).optional(),
  /** `--run-sandbox`: the run's fence when `--sandbox` does not say, and the hosts its dispatches may reach. */
  sandbox: z.object({ mode: z.enum(SANDBOX_MODES), allowNet: z.array(netRuleSchema) }).optional(),
});
export type RunFile = z.infer<typeof runFileSchema>;

/**
 * placement.json: an engine took the dispatch's supervisor as a job (specs/placement.md). Written by
 * whoever submitted it (the dispatcher, or the promoter of a queued dispatch) once the engine accepted
 * it; `node` filled in by the supervisor once its job runs.
 */
export const placementFileSchema = loose({
  schema: schemaField,
  engine: z.enum(ENGINES),
  jobId: z.string().regex(/^\d+$/),
  /** The cluster the engine named (a federation, `--clusters`), else null. */
  cluster: z.string().min(1).nullable(),
  submittedAt: isoTime,
  /** The node the job runs on, once it runs; null until then. */
  node: z.string().min(1).nullable(),
});
export type PlacementFile = z.infer<typeof placementFileSchema>;

/**
 * spend/<dispatchId>.json: one dispatch's part of its run's spend (src/folder/run-ledger.ts). Created with
 * nothing spent when the dispatch is admitted, rewritten whole by its supervisor while the run has a
 * budget, and by the record writer with the record's figures (`final`); then folded into spent.json.
 */
export const spendFileSchema = loose({
  schema: schemaField,
  dispatchId: z.string().min(1),
  name: z.string().min(1),
  at: isoTime,
  /** Tokens billed: input (cached included) plus output (reasoning included). */
  tokens: ms,
  /** Dollars where a figure is known (the CLI's own, else catherd's price), else null. */
  costUsd: z.number().nonnegative().nullable(),
  /** The record's figures: nothing of this dispatch will spend more. */
  final: z.boolean(),
});
export type SpendFile = z.infer<typeof spendFileSchema>;

/**
 * spent.json: the recorded dispatches' spend folded out of spend/, rewritten whole under the run's
 * spend.lock. `folded` names the dispatches of the last fold, whose files may outlive it by a crash: a
 * reader skips them, the next fold removes them.
 */
export const spentFileSchema = loose({
  schema: schemaField,
  at: isoTime,
  tokens: ms,
  costUsd: z.number().nonnegative(),
  unpriced: ms,
  dispatches: ms,
  folded: z.array(z.string().min(1)),
});
export type SpentFile = z.infer<typeof spentFileSchema>;

/**
 * spend-now.json: the run's whole spend as last summed (spent.json plus every part beside it), rewritten
 * under spend.lock by whoever found it older than a second; `parts` has each live dispatch's figures, so
 * that a supervisor can put its own fresher ones in their place.
 */
export const spendNowFileSchema = loose({
  schema: schemaField,
  at: isoTime,
  tokens: ms,
  costUsd: z.number().nonnegative(),
  unpriced: ms,
  live: ms,
  dispatches: ms,
  parts: z.record(z.string(), z.object({ tokens: ms, costUsd: z.number().nonnegative().nullable() })),
  /** Files of the ledger that could not be read when it was summed: their parts are missing. */
  problems: z.array(z.string()),
});
export type SpendNowFile = z.infer<typeof spendNowFileSchema>;

/** Every schema on disk, by file name: the source of specs/schemas/*.schema.json. */
export const FILE_SCHEMAS = {
  "spec.json": specFileSchema,
  "supervisor.json": supervisorFileSchema,
  "proc.json": procFileSchema,
  "thread.json": threadFileSchema,
  "stall.json": stallFileSchema,
  "exit.json": exitFileSchema,
  "admit.json": admitFileSchema,
  "record.json": recordFileSchema,
  "activity.json": activityFileSchema,
  "queued.json": queuedFileSchema,
  "promoted.json": promotedFileSchema,
  "next.json": nextFileSchema,
  "notify.json": notifyFileSchema,
  "placement.json": placementFileSchema,
  "run.json": runFileSchema,
  "spend.json": spendFileSchema,
  "spent.json": spentFileSchema,
  "spend-now.json": spendNowFileSchema,
} as const;
