import { z } from "zod";
import { isoTime, loose, ms } from "./schema-parts.js";
import { MAX_COST_CAP_USD, MAX_TOKENS_CAP } from "./spend/budget.js";
import { MAX_BUDGET_MINUTES } from "./spend/run-budget.js";
import { COST_SOURCES } from "./spend/usage.js";
import {
  ACCESS_LEVELS,
  BACKEND_IDS,
  ENDING_ERROR_CODES,
  ENGINES,
  ERROR_KINDS,
  EXIT_REASONS,
  STATUSES,
} from "./vocab.js";

// The fields several files share: the vocabularies' enums, an error, a worktree plan, a spec's caps
// and steering, a run's budget.
// Each file carries `schema: 1`, keeps fields it does not know, and is validated on every read.

export const positiveMs = z.number().int().positive();
export const positiveCount = z.number().int().positive();

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
export const engineWordsField = loose({
  name: z.enum(ENGINES),
  jobId: z.string().min(1),
  state: z.string().min(1),
  words: z.string(),
}).optional();
export type EngineWords = NonNullable<z.infer<typeof engineWordsField>>;

/** exit.json's and record.json's `error`: a code from a closed set (specs/record.md, "error"), a message. */
export const errorField = loose({
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
export const recordErrorField = loose({
  code: z.enum(ENDING_ERROR_CODES),
  kind: errorKindSchema.optional(),
  message: z.string(),
  retryAfter: isoTime.nullable().optional(),
  tail: z.array(z.string()).optional(),
  engine: engineWordsField,
}).nullable();

/** The caps a spec.json may carry (budget.ts bounds them: a hand-written spec is held to the same). */
export const maxTokensField = z.number().int().min(1).max(MAX_TOKENS_CAP);
export const maxCostField = z.number().positive().max(MAX_COST_CAP_USD);

/**
 * spec.json's `answerSchema` (specs/dispatch.md, "An answer that fits a schema"): the path of the folder's
 * answer-schema.json, a copy of `--answer-schema` made at admission. Absent from older folders: no schema.
 */
export const answerSchemaField = z.string().min(1).nullable();

/**
 * `dispatch --on-question` (specs/steering.md, "Questions"): what answers a question nobody answered.
 * `allow` and `deny` answer at once; `wait` gives a person `waitMs` to answer, then denies.
 */
export const QUESTION_POLICIES = ["allow", "deny", "wait"] as const;
export const onQuestionSchema = loose({
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
export const steerField = loose({
  keepOpenMs: z.number().int().positive().nullable(),
  onQuestion: onQuestionSchema.nullable(),
});
export type SteerSettings = z.infer<typeof steerField>;

/** run.json's `budget` (`--run-budget`): each limit as the flag bounds it, null when not given. */
export const runBudgetSchema = loose({
  tokens: maxTokensField.nullable(),
  usd: maxCostField.nullable(),
  minutes: z.number().int().min(1).max(MAX_BUDGET_MINUTES).nullable(),
});

/** An open tool call, as exit.json and activity.json list them. */
export const openToolCallSchema = loose({ id: z.string(), label: z.string(), openedAt: isoTime });

export const tokensSchema = z.object({ input: ms, cached: ms, output: ms });

/** Token counts as the provider bills them (src/domain/spend/usage.ts, specs/record.md "usage"). */
export const tokenCountsShape = {
  input: ms,
  cachedInput: ms,
  cacheWrite: ms,
  output: ms,
  reasoning: ms,
};
export const costSourceSchema = z.enum(COST_SOURCES).nullable();

/** One model's use: its tokens, and its dollars with where they come from. */
export const modelUsageSchema = loose({
  model: z.string().nullable(),
  ...tokenCountsShape,
  costUsd: z.number().nonnegative().nullable(),
  costSource: costSourceSchema,
});

/** record.json's and activity.json's `usage`: the total, and the same by model. */
export const usageSchema = loose({ ...tokenCountsShape, models: z.array(modelUsageSchema) });
export type UsageField = z.infer<typeof usageSchema>;
