#!/usr/bin/env node
// @ts-check
// Writes specs/schemas/<file>.schema.json from the zod schemas in src/domain/schemas.ts and
// src/domain/lock/lock-schemas.ts (built into dist/).
// test/schemas.test.ts fails when the committed files drift from the code: run `npm run schemas` then.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { renderJsonSchemas } from "./json-schemas.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { FILE_SCHEMAS } = /** @type {typeof import("../src/domain/schemas.js")} */ (
  await import(pathToFileURL(path.join(root, "dist/src/domain/schemas.js")).href)
);
const { LOCK_FILE_SCHEMAS } = /** @type {typeof import("../src/domain/lock/lock-schemas.js")} */ (
  await import(pathToFileURL(path.join(root, "dist/src/domain/lock/lock-schemas.js")).href)
);
const outDir = path.join(root, "specs/schemas");
fs.mkdirSync(outDir, { recursive: true });
for (const [name, text] of Object.entries(renderJsonSchemas({ ...FILE_SCHEMAS, ...LOCK_FILE_SCHEMAS }))) {
  fs.writeFileSync(path.join(outDir, name), text);
}
