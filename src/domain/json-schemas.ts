import { zodToJsonSchema } from "zod-to-json-schema";
import { FILE_SCHEMAS } from "./schemas.js";

/** The JSON Schema of every file on disk, as committed under specs/schemas/ (`<file>.schema.json` → text). */
export function renderJsonSchemas(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [file, schema] of Object.entries(FILE_SCHEMAS)) {
    const json = zodToJsonSchema(schema, {
      target: "jsonSchema2019-09",
      pipeStrategy: "input",
      $refStrategy: "none",
    });
    out[`${file.replace(/\.json$/, "")}.schema.json`] =
      `${JSON.stringify({ title: file, ...json }, null, 2)}\n`;
  }
  return out;
}
