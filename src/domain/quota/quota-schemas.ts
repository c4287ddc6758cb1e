import { z } from "zod";
import { backendIdSchema } from "../file-fields.js";
import { isoTime, loose, schemaField } from "../schema-parts.js";
import { MAX_WINDOWS, QUOTA_NAME_CHARS } from "../spend/quota.js";

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
