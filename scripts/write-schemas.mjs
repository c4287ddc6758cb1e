#!/usr/bin/env node
// Writes specs/schemas/<file>.schema.json from the zod schemas in src/domain/schemas.ts (built into dist/).
// test/schemas.test.ts fails when the committed files drift from the code: run `npm run schemas` then.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { renderJsonSchemas } = await import(path.join(root, "dist/src/domain/json-schemas.js"));
const outDir = path.join(root, "specs/schemas");
fs.mkdirSync(outDir, { recursive: true });
for (const [name, text] of Object.entries(renderJsonSchemas())) {
  fs.writeFileSync(path.join(outDir, name), text);
}
