import type { z } from "zod";
import { FILE_SCHEMAS } from "../domain/schemas.js";
import { type FileRead, readJsonFile } from "../infra/json-file.js";
import { fileIn } from "./layout.js";

/** The JSON files of a dispatch folder (run.json and the spend ledger belong to the run, the quota files to the home). */
export type FolderJsonFile = Exclude<
  keyof typeof FILE_SCHEMAS,
  | "run.json"
  | "spend.json"
  | "spent.json"
  | "spend-now.json"
  | "accounts.json"
  | "account-windows.json"
  | "parked.json"
  | "budgets.json"
  | "race.json"
  | "decision.json"
>;

/** What a JSON file of a dispatch folder holds, by its name. */
export type FolderJson<F extends FolderJsonFile> = z.infer<(typeof FILE_SCHEMAS)[F]>;

/**
 * Reads and validates one JSON file of the folder: missing, corrupt and newer are values, never throws
 * (see FileRead).
 */
export function readFolderJson<F extends FolderJsonFile>(dir: string, file: F): FileRead<FolderJson<F>> {
  return readJsonFile(fileIn(dir, file), FILE_SCHEMAS[file]);
}
