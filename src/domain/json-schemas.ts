import { z } from "zod";
import { FILE_SCHEMAS } from "./schemas.js";

/** The JSON Schema of every file on disk, as committed under specs/schemas/ (`<file>.schema.json` → text). */
export function renderJsonSchemas(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [file, schema] of Object.entries(FILE_SCHEMAS)) {
    const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
    out[`${file.replace(/\.json$/, "")}.schema.json`] =
      `${JSON.stringify({ title: file, ...json }, null, 2)}\n`;
  }
  return out;
}
