import { z } from "zod";
import { bootStamp, host, isoTime, loose, ms, schemaField, startTime } from "../schema-parts.js";

/** supervisor.json: the supervisor of a dispatch, named before it loads the rest of itself. */
export const supervisorFileSchema = loose({
  schema: schemaField,
  pid: z.number().int().positive(),
  startTime,
  host,
  startedAt: isoTime,
  /** The same instant on the boot's monotonic clock. */
  startedMono: bootStamp,
  /** How many supervisors took this dispatch over after the one before died: 0 for the first. */
  adoptions: ms.default(0),
  /** When the dispatch's first supervisor started: where its wall and exit.json's startedAt count from. */
  firstStartedAt: isoTime.optional(),
  /** The same instant on the boot's monotonic clock: what exit.json's durationMs counts from. */
  firstStartedMono: bootStamp,
});
export type SupervisorFile = z.infer<typeof supervisorFileSchema>;
