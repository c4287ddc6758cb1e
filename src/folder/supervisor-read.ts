import { type SupervisorFile, supervisorFileSchema } from "../domain/watch/supervisor-schema.js";
import { type FileRead, readJsonFile } from "../infra/json-file.js";
import { FILES, fileIn } from "./layout.js";

/**
 * Reads and validates the folder's supervisor.json alone (readFolderJson reads any file, with every
 * schema loaded): what a supervisor checks before it has loaded the rest of itself.
 */
export function readSupervisorFile(dir: string): FileRead<SupervisorFile> {
  return readJsonFile(fileIn(dir, FILES.supervisor), supervisorFileSchema);
}
