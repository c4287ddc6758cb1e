import { z } from "zod";
import { loose, SCHEMA_VERSION } from "../schemas.js";
import type { SlotClaim, SlotState } from "./slots.js";

// The files of `catherd lock` (specs/lock.md): a class's queue under the home, and the report a lock run
// by an agent leaves in its dispatch folder. Each carries `schema: 1` and keeps fields it does not know.

const schemaField = z.literal(SCHEMA_VERSION);
const isoTime = z.string().min(1);
const count = z.number().int().nonnegative();
const positive = z.number().int().positive();
const startTime = z.string().min(1).nullable();

const slotProcessSchema = loose({
  pid: positive,
  startTime,
  bootId: z.string().min(1).nullable(),
  host: z.string(),
  pidNs: z.string().min(1).nullable(),
});

const claimSchema = loose({
  id: z.string().min(1),
  ticket: positive,
  owner: slotProcessSchema,
  command: loose({ pid: positive, startTime }).nullable(),
  label: z.string(),
  slots: positive,
  askedAt: isoTime,
  heldSince: isoTime.nullable(),
  dispatch: loose({ id: z.string().min(1), dir: z.string().min(1) }).nullable(),
});

/** `<home>/locks/<class>/state.<n>.json`: one version of the class's queue (src/domain/lock/slots.ts). */
export const slotStateFileSchema = loose({
  schema: schemaField,
  class: z.string().min(1),
  nextTicket: positive,
  slots: positive.nullable(),
  holders: z.array(claimSchema),
  waiters: z.array(claimSchema),
});
export type SlotStateFile = z.infer<typeof slotStateFileSchema>;

/** The queue a state file holds. */
export function slotStateOf(file: SlotStateFile): SlotState {
  return {
    nextTicket: file.nextTicket,
    slots: file.slots,
    holders: file.holders as SlotClaim[],
    waiters: file.waiters as SlotClaim[],
  };
}

/** What a lock run under a dispatch is doing (`LOCK_REPORT_STATES`): waiting for its slot, or running. */
export const LOCK_REPORT_STATES = ["waiting", "running"] as const;
export type LockReportState = (typeof LOCK_REPORT_STATES)[number];

/**
 * `<dispatch>/lock-<pid>-<startTime>.json`: a `catherd lock` of the dispatch's agent, waiting for a slot
 * of `class` or running `label`. Its writer is named by pid and start time: the report of a lock that
 * died is ignored.
 */
export const lockReportFileSchema = loose({
  schema: schemaField,
  pid: positive,
  startTime,
  /** The pid namespace `pid` is of (a sandboxed agent's own); absent: the reader's. */
  pidNs: z.string().min(1).nullable().optional(),
  class: z.string().min(1),
  label: z.string(),
  state: z.enum(LOCK_REPORT_STATES),
  /** When it started to wait (waiting) or took its slot (running). */
  since: isoTime,
  /** Live waiters before it (waiting); null while running. */
  ahead: count.nullable(),
  /** Live holders of the class, and how many slots it allows. */
  held: count,
  slots: positive,
  /** How long it waited for its slot (running); 0 while waiting. */
  waitedMs: count,
});
export type LockReportFile = z.infer<typeof lockReportFileSchema>;

/** Every schema of the lock's files, by file name: the source of their specs/schemas/*.schema.json. */
export const LOCK_FILE_SCHEMAS = {
  "lock-state.json": slotStateFileSchema,
  "lock-report.json": lockReportFileSchema,
} as const;
