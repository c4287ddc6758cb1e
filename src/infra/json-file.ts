import * as fs from "node:fs";
import * as path from "node:path";
import type { z } from "zod";
import { checked } from "../domain/checked.js";
import { CatherdError } from "../domain/errors.js";
import { SCHEMA_VERSION } from "../domain/schema-version.js";
import { MAX_FILE_DEPTH, valueDeeperThan } from "../domain/text/json-depth.js";

/** The result of reading one file of a dispatch folder: a reader reports problems, it never crashes. */
export type FileRead<T> =
  | { kind: "ok"; value: T }
  | { kind: "missing" }
  | { kind: "invalid"; error: CatherdError };

/** No file of a dispatch folder is anywhere near this big; a bigger one is not read. */
export const MAX_JSON_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Reads and validates a JSON file. Missing → `missing`; torn, hand-broken, newer, not a regular file or
 * oversized → `invalid`.
 */
export function readJsonFile<S extends z.ZodType>(file: string, schema: S): FileRead<z.infer<S>> {
  let text: string;
  try {
    text = readRegularFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "missing" };
    const message = error instanceof Error ? error.message : String(error);
    return {
      kind: "invalid",
      error: new CatherdError("E_IO_READ", `cannot read ${file}: ${message}`, {
        fix: `inspect it with: ls -l ${file}`,
        cause: error,
        file,
      }),
    };
  }
  return parseJsonText(file, text, schema);
}

/**
 * A regular file's text. Opened without blocking and checked first: a FIFO or a device left in a folder
 * must not hang a reader, nor a huge file exhaust it.
 */
function readRegularFile(file: string): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw Object.assign(new Error("not a regular file"), { code: "EFTYPE" });
    if (stat.size > MAX_JSON_FILE_BYTES) {
      throw Object.assign(new Error(`${stat.size} bytes, over the ${MAX_JSON_FILE_BYTES}-byte limit`), {
        code: "EFBIG",
      });
    }
    return fs.readFileSync(fd, "utf8");
  } finally {
    fs.closeSync(fd);
  }
}

export function parseJsonText<S extends z.ZodType>(
  file: string,
  text: string,
  schema: S,
): FileRead<z.infer<S>> {
  const name = path.basename(file);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return {
      kind: "invalid",
      error: new CatherdError("E_FILE_CORRUPT", `${file} is not valid JSON (torn or hand-edited)`, {
        fix: `inspect it with: cat ${file}`,
        file,
      }),
    };
  }
  // Checked before zod and every reader walk it (an agent can write a lock report): see domain/text/json-depth.ts.
  if (valueDeeperThan(raw, MAX_FILE_DEPTH)) {
    return {
      kind: "invalid",
      error: new CatherdError(
        "E_FILE_CORRUPT",
        `${file} nests arrays and objects deeper than catherd's limit of ${MAX_FILE_DEPTH} levels`,
        { fix: `inspect it with: head -c 2000 ${file}`, file },
      ),
    };
  }
  const version = (raw as { schema?: unknown } | null)?.schema;
  if (typeof version === "number" && version > SCHEMA_VERSION) {
    return {
      kind: "invalid",
      error: new CatherdError(
        "E_SCHEMA_NEWER",
        `${file} has schema ${version}, newer than this catherd understands (${SCHEMA_VERSION})`,
        { fix: "upgrade catherd: npm install -g catherd@latest", file },
      ),
    };
  }
  try {
    const value = checked(schema, raw, (issue) => {
      const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
      return new CatherdError(
        name === "spec.json" ? "E_SPEC_INVALID" : "E_FILE_CORRUPT",
        `${file} is invalid${where}: ${issue?.message ?? "does not match its schema"}`,
        { fix: `see specs/dispatch-folder.md for the fields of ${name}`, file },
      );
    });
    return { kind: "ok", value };
  } catch (error) {
    if (error instanceof CatherdError) return { kind: "invalid", error };
    throw error;
  }
}

/** The value, or null when missing or invalid. */
export function okValue<T>(read: FileRead<T>): T | null {
  return read.kind === "ok" ? read.value : null;
}
