import {
  accountFileSchema,
  admitFileSchema,
  nextFileSchema,
  placementFileSchema,
  promotedFileSchema,
  queuedFileSchema,
  runFileSchema,
} from "./admission/admission-schemas.js";
import { checkRunFileSchema } from "./check/check.js";
import { exitFileSchema, notifyFileSchema, recordFileSchema } from "./ending/ending-schemas.js";
import {
  accountStateFileSchema,
  accountsFileSchema,
  budgetsFileSchema,
  parkedFileSchema,
} from "./quota/quota-schemas.js";
import { decisionFileSchema, raceFileSchema } from "./race/race-schemas.js";
import { specFileSchema } from "./spec-schemas.js";
import { spendFileSchema, spendNowFileSchema, spentFileSchema } from "./spend/spend-schemas.js";
import {
  activityFileSchema,
  procFileSchema,
  quotaFileSchema,
  stallFileSchema,
  threadFileSchema,
} from "./watch/live-schemas.js";
import { supervisorFileSchema } from "./watch/supervisor-schema.js";

// The files of a dispatch folder and a run (specs/dispatch-folder.md), one module per family of files:
// what a dispatch asks (spec-schemas.ts), admission and the queue (admission-schemas.ts), the agent at
// work (live-schemas.ts), the end (ending-schemas.ts), the run's spend (spend-schemas.ts), and the fields
// they share (file-fields.ts, schema-parts.ts). Each carries `schema: 1`, keeps fields it does not know (a
// newer catherd or a person may add some), and is validated on every read. supervisor.json's schema is a
// module of its own: the supervisor's first steps read and write only that file (specs/supervisor.md).

export * from "./admission/admission-schemas.js";
export { type CheckRunFile, checkRunFileSchema } from "./check/check.js";
export * from "./ending/ending-schemas.js";
export * from "./file-fields.js";
export * from "./quota/quota-schemas.js";
export * from "./race/race-schemas.js";
export { loose, SCHEMA_VERSION } from "./schema-parts.js";
export * from "./spec-schemas.js";
export * from "./spend/spend-schemas.js";
export * from "./watch/live-schemas.js";
export { type SupervisorFile, supervisorFileSchema } from "./watch/supervisor-schema.js";

/** Every schema on disk, by file name: the source of specs/schemas/*.schema.json. */
export const FILE_SCHEMAS = {
  "spec.json": specFileSchema,
  "supervisor.json": supervisorFileSchema,
  "proc.json": procFileSchema,
  "thread.json": threadFileSchema,
  "quota.json": quotaFileSchema,
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
  "account.json": accountFileSchema,
  "verify.json": checkRunFileSchema,
  "run.json": runFileSchema,
  "spend.json": spendFileSchema,
  "spent.json": spentFileSchema,
  "spend-now.json": spendNowFileSchema,
  "accounts.json": accountsFileSchema,
  "account-windows.json": accountStateFileSchema,
  "parked.json": parkedFileSchema,
  "budgets.json": budgetsFileSchema,
  "race.json": raceFileSchema,
  "decision.json": decisionFileSchema,
} as const;
