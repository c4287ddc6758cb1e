import { z } from "zod";
import { backendIdSchema } from "../file-fields.js";
import { isoTime, loose, schemaField } from "../schema-parts.js";
import { MAX_COST_CAP_USD, MAX_TOKENS_CAP } from "../spend/budget.js";
import { MAX_WINDOWS, QUOTA_NAME_CHARS } from "../spend/quota.js";
import { MAX_BUDGET_MINUTES } from "../spend/run-budget.js";
import { PERIODS } from "./period.js";
import { MAX_BUDGETS, parseScope, TAG_PATTERN } from "./period-budget.js";

// The home's quota files (specs/quota.md): the accounts declared (accounts.json), each account's windows
// as its CLI last reported them (quota/<backend>/<account>.json), and the runs that hold parked work
// (parked/<run>.json). Each carries `schema: 1`, keeps fields it does not know, and is validated on read.

/** An account's name: what `--account` and `catherd account` spell, a file name in the home. */
export const accountNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,39}$/, "1-40 of a-z 0-9 . _ -, starting with a letter or digit")
  .refine((name) => !name.includes(".."), "must not contain ..");

/** One account: a CLI's configuration folder, given a name (never a credential: only its folder). */
export const accountSchema = loose({
  backend: backendIdSchema,
  name: accountNameSchema,
  /** The folder the CLI's configuration variable names (CLAUDE_CONFIG_DIR, CODEX_HOME…), absolute. */
  dir: z.string().min(1).max(4096),
  addedAt: isoTime,
});
export type Account = z.infer<typeof accountSchema>;

/** accounts.json: the accounts declared in the home. */
export const accountsFileSchema = loose({
  schema: schemaField,
  accounts: z.array(accountSchema).max(1000),
});
export type AccountsFile = z.infer<typeof accountsFileSchema>;

/** A window of an account, as the home keeps it: quota.json's, with the dispatch that saw it last. */
export const accountWindowSchema = loose({
  limit: z.string().max(QUOTA_NAME_CHARS),
  window: z.string().min(1).max(QUOTA_NAME_CHARS),
  usedPercent: z.number().min(0).max(100).nullable(),
  windowMinutes: z.number().int().positive().nullable(),
  resetsAt: isoTime.nullable(),
  seenAt: isoTime,
  status: z.enum(["allowed", "warning", "rejected"]).nullable().optional(),
  by: z.string().max(64).nullable().optional(),
});

/** quota/<backend>/<account>.json: what the account's windows were when last reported. */
export const accountStateFileSchema = loose({
  schema: schemaField,
  backend: backendIdSchema,
  account: accountNameSchema,
  windows: z.array(accountWindowSchema).max(MAX_WINDOWS),
});
export type AccountStateFile = z.infer<typeof accountStateFileSchema>;

/** parked/<run>.json: a run holds queued work that waits for a time (a window's reset), the first of them. */
export const parkedFileSchema = loose({
  schema: schemaField,
  run: z.string().min(1).max(64),
  until: isoTime,
});
export type ParkedFile = z.infer<typeof parkedFileSchema>;

/** The most tags a dispatch is given (`--tag`, repeatable). */
export const MAX_TAGS = 16;

/** A tag (`dispatch --tag`): 1-40 of a-z 0-9 . _ -, starting with a letter or digit. */
export const tagSchema = z
  .string()
  .regex(TAG_PATTERN, "1-40 of a-z 0-9 . _ -, starting with a letter or digit");

/** A dispatch's tags, each once. */
export const tagsSchema = z.array(tagSchema).max(MAX_TAGS);

/** One budget by period (specs/quota.md, "Budgets by period"): its scope, its period, at least one limit. */
export const periodBudgetSchema = loose({
  scope: z
    .string()
    .max(200)
    .refine((s) => !("rule" in parseScope(s)), "home, backend:<cli>, account:<cli>/<name> or tag:<tag>"),
  per: z.enum(PERIODS),
  usd: z.number().positive().max(MAX_COST_CAP_USD).nullable(),
  tokens: z.number().int().positive().max(MAX_TOKENS_CAP).nullable(),
  minutes: z.number().int().positive().max(MAX_BUDGET_MINUTES).nullable(),
  setAt: isoTime,
}).refine((b) => b.usd !== null || b.tokens !== null || b.minutes !== null, "sets no limit");
export type PeriodBudgetEntry = z.infer<typeof periodBudgetSchema>;

/** budgets.json: the home's budgets by period, at most one per scope and period. */
export const budgetsFileSchema = loose({
  schema: schemaField,
  budgets: z.array(periodBudgetSchema).max(MAX_BUDGETS),
});
export type BudgetsFile = z.infer<typeof budgetsFileSchema>;
