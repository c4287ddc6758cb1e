import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { renderJsonSchemas } from "../scripts/json-schemas.mjs";
import { LOCK_FILE_SCHEMAS } from "../src/domain/lock/lock-schemas.js";
import { exitFileSchema, FILE_SCHEMAS, specFileSchema } from "../src/domain/schemas.js";
import { parseJsonText } from "../src/infra/json-file.js";
import { ROOT } from "./helpers/folders.js";

describe("JSON Schemas in specs/schemas", () => {
  it("match the zod schemas in the code (run `npm run schemas` after changing them)", () => {
    for (const [name, text] of Object.entries(renderJsonSchemas({ ...FILE_SCHEMAS, ...LOCK_FILE_SCHEMAS }))) {
      const committed = path.join(ROOT, "specs/schemas", name);
      expect(fs.existsSync(committed), `${name} is committed`).toBe(true);
      expect(fs.readFileSync(committed, "utf8"), name).toBe(text);
    }
  });
});

describe("reading files on disk", () => {
  it("keeps fields it does not know", () => {
    const read = parseJsonText("spec.json", '{"cmd":"x","futureField":7}', specFileSchema);
    expect(read).toMatchObject({ kind: "ok", value: { cmd: "x", futureField: 7, backend: "exec" } });
  });

  it("tells a newer schema apart from a corrupt file", () => {
    const newer = parseJsonText("/d/exit.json", '{"schema":2}', exitFileSchema);
    expect(newer.kind === "invalid" && newer.error.code).toBe("E_SCHEMA_NEWER");
    expect(newer.kind === "invalid" && newer.error.fix).toContain("upgrade catherd");
    const torn = parseJsonText("/d/exit.json", '{"schema":1,"rea', exitFileSchema);
    expect(torn.kind === "invalid" && torn.error.code).toBe("E_FILE_CORRUPT");
    const wrong = parseJsonText("/d/spec.json", '{"cmd":""}', specFileSchema);
    expect(wrong.kind === "invalid" && wrong.error.message).toMatch(/spec\.json is invalid at cmd/);
  });
});
