import { z } from "zod";
import { gitSnapshotSchema } from "../ending/ending-schemas.js";
import {
  accessSchema,
  backendIdSchema,
  envName,
  positiveCount,
  positiveMs,
  runBudgetSchema,
} from "../file-fields.js";
import { MAX_HOST_CAPS, MAX_TARGET_CHARS, placementSchema } from "../placement.js";
import { PERIODS } from "../quota/period.js";
import { accountNameSchema, tagsSchema } from "../quota/quota-schemas.js";
import { admitRaceSchema } from "../race/race-schemas.js";
import { netRuleSchema, SANDBOX_MODES } from "../sandbox/sandbox.js";
import { isoTime, loose, ms, processIdentity, schemaField } from "../schema-parts.js";
import { RUN_BUDGET_KEYS } from "../spend/run-budget.js";
import { ENGINES, QUEUE_BLOCKERS } from "../vocab.js";

// The files of admission and the queue: admit.json (its ladder, its placement), queued.json,
// promoted.json, next.json, run.json, placement.json.
// Each file carries `schema: 1`, keeps fields it does not know, and is validated on every read.

/** A notification command (`--notify`, `--run-notify`): run by `sh -c`, at most 8 KiB, no NUL. */
export const notifyCommandSchema = z
  .string()
  .min(1)
  .max(8192)
  .refine((v) => !v.includes("\0"), "must not contain NUL");

/** A rung of `--fallback`, as admit.json carries the rungs not yet tried. */
export const rungSchema = z.object({
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
  /** Repair turns left to the chain (--verify-repairs) for a check still red; absent: 0. */
  checkRepairs: ms.optional(),
  /** Moves to another account of the pool so far (specs/quota.md, "A pool"); absent: none. */
  accountMoves: ms.optional(),
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
    /** `--lock-hint`: each attempt's brief gets the hint, composed for its CLI; absent: false. */
    lockHint: z.boolean().optional(),
    /** Arguments after `--`: given again only to the same backend. */
    extraArgs: z.array(z.string()),
  }),
});

/**
 * admit.json's `placement`: the engine that runs the dispatch's supervisor as a job, the options given
 * to it as they are (`--slurm-opt`), and its target where the engine takes one (`ssh:HOST`'s host, as the
 * user gave it). Absent: `local`, the supervisor runs on the dispatching host.
 */
export const admitPlacementSchema = loose({
  engine: z.enum(ENGINES),
  options: z.array(z.string()),
  target: z.string().min(1).max(MAX_TARGET_CHARS).optional(),
});
export type AdmitPlacement = z.infer<typeof admitPlacementSchema>;
export type LadderFile = z.infer<typeof ladderSchema>;

/**
 * What a follow-up (specs/dispatch.md, "Following up") reads of the turn it continues, and the link to
 * it: `access` and `effort` as the request gave them (null: the CLI's own; absent from older folders), and
 * `followUpOf`, the dispatch id of the turn this one continues (absent: it starts a conversation).
 */
export const followUpAdmitShape = {
  access: accessSchema.nullable().optional(),
  effort: z.string().nullable().optional(),
  followUpOf: z.string().min(1).optional(),
};

/** admit.json's `accounts`: the account names it may run on, and `--window-headroom`. */
export const accountAskSchema = loose({
  pool: z.array(accountNameSchema).min(1).max(100),
  headroomPercent: z.number().min(1).max(100),
});

/**
 * account.json: the account a dispatch runs on, written before its supervisor starts (at admission, or by
 * the promotion that chose it from its pool); its `dir` is the folder the CLI's configuration variable
 * names, null for `default` (the environment's own).
 */
export const accountFileSchema = loose({
  schema: schemaField,
  backend: backendIdSchema,
  name: accountNameSchema,
  dir: z.string().min(1).max(4096).nullable(),
  /** The variable that names it to the CLI (CLAUDE_CONFIG_DIR…), null with `dir` null. */
  variable: envName.nullable(),
  at: isoTime,
});
export type AccountFile = z.infer<typeof accountFileSchema>;

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
  /** The accounts it may run on and the headroom it keeps (specs/quota.md); absent: `exec`, none. */
  accounts: accountAskSchema.optional(),
  /** `--tag`: what budgets by tag count it under (specs/quota.md); absent: none. */
  tags: tagsSchema.optional(),
  /** The race it is an attempt of (`--attempts`, `--also`: specs/dispatch.md, "A race"); absent: none. */
  race: admitRaceSchema.optional(),
  ...followUpAdmitShape,
});
export type AdmitFile = z.infer<typeof admitFileSchema>;

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
    /** Held by its host's cap (`--max-parallel-host`): the host its placement names. */
    host: z.string().max(MAX_TARGET_CHARS).optional(),
    /** Held by its host not answering: the engine's words (bounded, as ssh said them). */
    reason: z.string().max(600).optional(),
    /** With `host`: how many times its host did not answer in a row. */
    tries: z.number().int().positive().optional(),
    cap: z.number().int().positive().optional(),
    /** Held by the run's budget: which of its limits was reached, the limit, and how much was used. */
    budget: z.enum(RUN_BUDGET_KEYS).optional(),
    limit: z.number().positive().optional(),
    used: z.number().nonnegative().optional(),
    /** Held by its accounts' windows: the accounts, the window that frees first, when (specs/quota.md). */
    accounts: z.string().max(1024).optional(),
    window: z.string().max(160).optional(),
    usedPercent: z.number().min(0).max(100).nullable().optional(),
    until: isoTime.nullable().optional(),
    /** Held by a budget by period: its scope and period (`until` the period's end, specs/quota.md). */
    scope: z.string().max(200).optional(),
    period: z.enum(PERIODS).optional(),
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

export const runFileSchema = loose({
  schema: schemaField,
  id: z.string().min(1),
  createdAt: isoTime,
  maxParallel: z.number().int().positive().nullable().optional(),
  /** `--max-parallel-backend codex=3`: live dispatches per backend within the run. */
  maxParallelBackend: z.record(backendIdSchema, z.number().int().positive()).optional(),
  /** `--max-parallel-host box=2`: live dispatches per host their placements name (an engine's target). */
  maxParallelHost: z
    .record(z.string().min(1).max(MAX_TARGET_CHARS), z.number().int().positive())
    .refine((caps) => Object.keys(caps).length <= MAX_HOST_CAPS, `at most ${MAX_HOST_CAPS} hosts`)
    .optional(),
  /** `--run-budget`: what the whole run may spend (run-budget.ts); null or absent: no budget. */
  budget: runBudgetSchema.nullable().optional(),
  /** `--run-notify`: the shell command run once when any dispatch of the run is recorded. */
  notify: notifyCommandSchema.nullable().optional(),
  /** `--run-placement`: where the run's dispatches go when `--placement` does not say. */
  placement: placementSchema.optional(),
  /** `--run-account`: the accounts of every dispatch of the run that names none (specs/quota.md). */
  account: z.string().min(1).max(4200).optional(),
  /** `--run-sandbox`: the run's sandbox when `--sandbox` does not say, and the hosts its dispatches may reach. */
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
  /** Where on the engine, as the user gave it (`ssh:HOST`'s host); absent for an engine that takes none. */
  target: z.string().min(1).max(MAX_TARGET_CHARS).optional(),
  jobId: z.string().regex(/^\d+$/),
  /** The cluster the engine named (a federation, `--clusters`), else null. */
  cluster: z.string().min(1).nullable(),
  submittedAt: isoTime,
  /** The node the job runs on, once it runs; null until then. */
  node: z.string().min(1).nullable(),
});
export type PlacementFile = z.infer<typeof placementFileSchema>;
