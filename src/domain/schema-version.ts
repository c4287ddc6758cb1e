/**
 * The `schema` every file of a dispatch folder and a run carries (specs/dispatch-folder.md). Apart from
 * the schemas, so that a writer stamps it without loading zod.
 */
export const SCHEMA_VERSION = 1;
