import { SCHEMA_VERSION } from "../domain/schema-version.js";
import { createJsonExclusive, writeFileAtomic, writeJsonAtomic } from "../infra/atomic.js";
import { FILES, fileIn } from "./layout.js";
import type { FolderJson, FolderJsonFile } from "./read.js";

/**
 * How JSON files reach the disk: atomically replaced, or created exclusively. The supervisor passes its
 * own (tests inject write faults there); everyone else writes through `atomicWriter`.
 */
export interface JsonWriter {
  writeJson(file: string, value: unknown): void;
  /** False when the file exists already: someone else wrote it first. */
  createJson(file: string, value: unknown): boolean;
}

export const atomicWriter: JsonWriter = { writeJson: writeJsonAtomic, createJson: createJsonExclusive };

/** A file's fields without `schema`: the writer stamps the version this catherd writes. */
export type FolderJsonBody<F extends FolderJsonFile> = Omit<FolderJson<F>, "schema">;

/** Replaces one JSON file of the folder atomically, stamped with `schema`. */
export function writeFolderJson<F extends FolderJsonFile>(
  dir: string,
  file: F,
  body: FolderJsonBody<F>,
  writer: JsonWriter = atomicWriter,
): void {
  writer.writeJson(fileIn(dir, file), { schema: SCHEMA_VERSION, ...body });
}

/** Creates one JSON file of the folder exclusively: false when it exists already. */
export function createFolderJson<F extends FolderJsonFile>(
  dir: string,
  file: F,
  body: FolderJsonBody<F>,
  writer: JsonWriter = atomicWriter,
): boolean {
  return writer.createJson(fileIn(dir, file), { schema: SCHEMA_VERSION, ...body });
}

/** brief.md: the prompt, byte for byte. */
export function writeBrief(dir: string, brief: Uint8Array): void {
  writeFileAtomic(fileIn(dir, FILES.brief), brief);
}

/** reply.md: the agent's final answer as text. */
export function writeReply(dir: string, reply: string): void {
  writeFileAtomic(fileIn(dir, FILES.reply), reply);
}

/** `cancel`: its existence is the request; it holds the request time for people. */
export function requestCancel(dir: string, at: Date): void {
  writeFileAtomic(fileIn(dir, FILES.cancel), `${at.toISOString()}\n`);
}
