import { z } from "zod";
import { checkSpecField } from "./check/check.js";
import {
  answerSchemaField,
  backendIdSchema,
  envName,
  maxCostField,
  maxTokensField,
  positiveCount,
  positiveMs,
  steerField,
  worktreePlanSchema,
} from "./file-fields.js";
import { sandboxField } from "./sandbox/sandbox.js";
import { loose, ms, schemaField } from "./schema-parts.js";
import { SPEC_DEFAULT_BACKEND } from "./vocab.js";

// spec.json (specs/dispatch-folder.md): what a dispatch asks, as written, and with every default
// applied.
// Each file carries `schema: 1`, keeps fields it does not know, and is validated on every read.

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
  /**
   * How many leading bytes of brief.md are the brief as given; what catherd appended for the CLI follows
   * (specs/dispatch-folder.md). Absent: brief.md is taken whole (a folder written before the field).
   */
  briefBytes: z.number().int().nonnegative().optional(),
  answerSchema: answerSchemaField.optional(),
  steer: steerField.optional(),
  /** --sandbox files|files+net: the sandbox the agent runs in (specs/sandbox.md); absent: none. */
  sandbox: sandboxField.optional(),
  /** --verify: the check run after an ok turn (specs/dispatch.md, "Checks and races"); absent: none. */
  verify: checkSpecField.optional(),
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
  /** The brief as given: brief.md's first so many bytes (absent: all of brief.md). */
  briefBytes: z.number().int().nonnegative().optional(),
  /** --answer-schema: the folder's answer-schema.json, which the final answer must fit; absent: none. */
  answerSchema: answerSchemaField.optional(),
  /** --steerable: how catherd talks to the running agent (specs/steering.md); absent: it does not. */
  steer: steerField.optional(),
  /** --sandbox: the sandbox the agent runs in (specs/sandbox.md); absent: none. */
  sandbox: sandboxField.optional(),
  /** --verify: the check run after an ok turn; absent: none. */
  verify: checkSpecField.optional(),
});
export type Spec = z.infer<typeof specSchema>;
