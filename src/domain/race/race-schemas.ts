import { z } from "zod";
import { backendIdSchema, positiveCount } from "../file-fields.js";
import { isoTime, loose, schemaField } from "../schema-parts.js";
import { MAX_RACE_ATTEMPTS, RACE_PICKS } from "./race-rules.js";

// A race's own files (specs/dispatch-folder.md, "A race's files"), under `<run>/races/<name>/<raceId>/`:
// race.json, written once at its admission, says which dispatches are its attempts and how it picks;
// decision.json, created once (exclusively) by the first that finds it decided, freezes its winner.
// Everything else is read from the attempts' own records.

/** One attempt as admission named it: its dispatch name (`NAME.k`) and its first dispatch's id. */
export const raceAttemptSchema = loose({
  attempt: positiveCount.max(MAX_RACE_ATTEMPTS),
  name: z.string().min(1),
  dispatchId: z.string().min(1),
  backend: backendIdSchema,
  model: z.string().nullable(),
});

/** race.json: the race's attempts and its pick, written under the run's lock with the attempts' admission. */
export const raceFileSchema = loose({
  schema: schemaField,
  name: z.string().min(1),
  raceId: z.string().min(1),
  run: z.string().min(1),
  pick: z.enum(RACE_PICKS),
  createdAt: isoTime,
  attempts: z.array(raceAttemptSchema).min(1).max(MAX_RACE_ATTEMPTS),
});
export type RaceFile = z.infer<typeof raceFileSchema>;

/** decision.json: the race decided, created exclusively by the first to see it so; never rewritten. */
export const decisionFileSchema = loose({
  schema: schemaField,
  raceId: z.string().min(1),
  pick: z.enum(RACE_PICKS),
  /** The winning attempt's number; null when none passed, and always for `--pick all`. */
  winner: positiveCount.max(MAX_RACE_ATTEMPTS).nullable(),
  decidedAt: isoTime,
  /** Who wrote it: the winning attempt's supervisor, or a reader (`wait`, `result`, `status`). */
  by: z.enum(["supervisor", "reader"]),
});
export type DecisionFile = z.infer<typeof decisionFileSchema>;

/**
 * admit.json's `race`: the race an attempt belongs to, on every attempt of its chain (a repair turn too);
 * absent from a dispatch of no race. Its supervisor reads it after its record to settle the race.
 */
export const admitRaceSchema = loose({
  name: z.string().min(1),
  raceId: z.string().min(1),
  attempt: positiveCount.max(MAX_RACE_ATTEMPTS),
  pick: z.enum(RACE_PICKS),
});
export type AdmitRace = z.infer<typeof admitRaceSchema>;
