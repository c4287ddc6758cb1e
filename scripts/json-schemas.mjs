// @ts-check
// Renders the zod schemas of the files on disk as the JSON Schemas committed under specs/schemas/. Tooling,
// not part of the shipped program: zod-to-json-schema is a dev dependency. Used by scripts/write-schemas.mjs
// (`npm run schemas`) and by test/schemas.test.ts, which fails when the committed files drift.
import { zodToJsonSchema } from "zod-to-json-schema";

/**
 * The JSON Schema of every file on disk (`<file>.schema.json` → text).
 * @param {Readonly<Record<string, import("zod").ZodTypeAny>>} fileSchemas FILE_SCHEMAS of src/domain/schemas.ts
 * @returns {Record<string, string>}
 */
export function renderJsonSchemas(fileSchemas) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const [file, schema] of Object.entries(fileSchemas)) {
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
