import { z } from "zod";
import { SCHEMA_VERSION } from "./schema-version.js";

// What every file of a dispatch folder and a run shares (specs/dispatch-folder.md): the `schema` version,
// objects that keep the fields they do not know, and the identity of a process. schemas.ts builds the
// files from these; supervisor-schema.ts builds supervisor.json alone, for the supervisor's first steps.

export { SCHEMA_VERSION } from "./schema-version.js";

/**
 * An object schema that keeps the fields it does not know (a newer catherd or a person may add some).
 * Typed as a plain object of the known fields: the extra ones are carried along, never read.
 */
export function loose<T extends z.ZodRawShape>(shape: T): z.ZodObject<T> {
  return z.object(shape).passthrough() as unknown as z.ZodObject<T>;
}

export const schemaField = z.literal(SCHEMA_VERSION);
export const isoTime = z.string().min(1);
export const ms = z.number().int().nonnegative();
/**
 * Start time of a process as the platform reads it (Linux: /proc/<pid>/stat field 22, in clock ticks);
 * null when it could not be read: the process was alive, its identity cannot be verified.
 */
export const startTime = z.string().min(1).nullable();
/**
 * The host a process ran on (src/domain/state/host.ts): a pid and a start time mean something only there.
 * Optional: a folder written before hosts were recorded names none, and its processes count as this host's.
 */
export const host = loose({
  name: z.string(),
  bootId: z.string().min(1).nullable(),
  pidNamespace: z.string().min(1).nullable(),
}).optional();
/**
 * A reading of the monotonic clock the processes of one boot share (src/domain/watch/boot-clock.ts): ms since
 * boot, and the boot id. Optional where it appears: a file written before it was recorded has none, and
 * time since it is then measured on the wall clock.
 */
export const bootStamp = z
  .object({ bootId: z.string().min(1).nullable(), ms: z.number().nonnegative() })
  .optional();
export const processIdentity = z.object({ pid: z.number().int().positive(), startTime, host });
