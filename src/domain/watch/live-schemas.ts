import { z } from "zod";
import { costSourceSchema, openToolCallSchema, tokensSchema, usageSchema } from "../file-fields.js";
import { bootStamp, host, isoTime, loose, ms, schemaField, startTime } from "../schema-parts.js";
import { MAX_WINDOWS, QUOTA_NAME_CHARS, WINDOW_STATUSES } from "../spend/quota.js";

// The files of a dispatch while its agent runs: proc.json, thread.json, quota.json, stall.json and
// activity.json. Each file carries `schema: 1`, keeps fields it does not know, and is validated on every read.

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

/** quota.json: the provider's windows as the CLI last reported them (src/domain/spend/quota.ts). */
export const quotaFileSchema = loose({
  schema: schemaField,
  windows: z
    .array(
      loose({
        limit: z.string().max(QUOTA_NAME_CHARS),
        window: z.string().min(1).max(QUOTA_NAME_CHARS),
        usedPercent: z.number().min(0).max(100).nullable(),
        windowMinutes: z.number().int().positive().nullable(),
        resetsAt: isoTime.nullable(),
        /** What the CLI said of the window (rejected: spent); null: nothing. Absent in an older catherd's file. */
        status: z.enum(WINDOW_STATUSES).nullable().optional(),
        seenAt: isoTime,
      }),
    )
    .max(MAX_WINDOWS),
});
export type QuotaFile = z.infer<typeof quotaFileSchema>;

export const stallFileSchema = loose({ schema: schemaField, at: isoTime, quietMs: ms });
export type StallFile = z.infer<typeof stallFileSchema>;

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
