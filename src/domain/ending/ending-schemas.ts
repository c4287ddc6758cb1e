import { z } from "zod";
import { recordCheckField } from "../check/check.js";
import {
  backendIdSchema,
  costSourceSchema,
  errorField,
  errorKindSchema,
  exitReasonSchema,
  maxCostField,
  maxTokensField,
  openToolCallSchema,
  positiveCount,
  recordErrorField,
  statusSchema,
  tokensSchema,
  usageSchema,
} from "../file-fields.js";
import { isoTime, loose, ms, processIdentity, schemaField } from "../schema-parts.js";
import { CONTAINMENTS } from "../vocab.js";
import { DECLARED_STATUSES } from "./declared-outcome.js";

// The files of a dispatch's end: exit.json, record.json (its usage, its git snapshot), notify.json.
// Each file carries `schema: 1`, keeps fields it does not know, and is validated on every read.

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

/** Why a chain goes on to a next attempt (record.json `next.why`, specs/dispatch.md §8). */
export const NEXT_WHYS = ["retry", "failover", "repair", "account"] as const;

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
  /** The account it ran on (account.json's name, specs/quota.md); null or absent: none. */
  account: z.string().nullable().optional(),
  /** Its `--tag`s (admit.json's): what budgets by tag count it under (specs/quota.md); absent: none. */
  tags: z.array(z.string().max(40)).max(16).optional(),
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
  /** With --verify: the check, whether it passed, and its chain's runs (specs/record.md, "verify"). Absent: none. */
  verify: recordCheckField.optional(),
  /** A sandboxed dispatch's account of its sandbox (specs/record.md, "sandbox"). Absent: not sandboxed. */
  sandbox: loose({
    mode: z.enum(["files", "files+net"]),
    denied: ms,
    firstDenied: z.string().nullable(),
    refusedWrite: z.string().nullable(),
  }).optional(),
});
export type RecordFile = z.infer<typeof recordFileSchema>;

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
