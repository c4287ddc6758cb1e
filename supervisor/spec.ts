import * as path from "node:path";
import type { Backend } from "../src/backends/types.js";
import { defaultStallMs, SPEC_DEFAULTS } from "../src/domain/defaults.js";
import { CatherdError } from "../src/domain/errors.js";
import { SCHEMA_VERSION, type Spec, type SpecFile, specFileSchema } from "../src/domain/schemas.js";
import { readJsonFile } from "../src/infra/json-file.js";

/**
 * Reads spec.json. Throws E_SPEC_INVALID when it is missing or does not fit the schema, else the read's own
 * error: E_FILE_CORRUPT (not JSON), E_SCHEMA_NEWER, E_IO_READ (specs/supervisor.md, Start).
 */
export function readSpecFile(dir: string): SpecFile {
  const file = path.join(dir, "spec.json");
  const read = readJsonFile(file, specFileSchema);
  if (read.kind === "ok") return read.value;
  if (read.kind === "missing") {
    throw new CatherdError("E_SPEC_INVALID", `${file} is missing`, {
      fix: "write spec.json (see specs/dispatch-folder.md) or use catherd dispatch",
    });
  }
  throw read.error;
}

/** Applies the backend's defaults to what a spec leaves out; relative paths are relative to the folder. */
export function resolveSpec(file: SpecFile, dir: string, backend: Backend): Spec {
  const idleMs = file.idleMs ?? backend.defaults.idleMs;
  const stdinPath = file.stdinPath ?? null;
  return {
    ...file,
    schema: SCHEMA_VERSION,
    dispatchId: file.dispatchId ?? path.basename(dir),
    backend: backend.id,
    cmd: file.cmd,
    args: file.args,
    env: file.env,
    cwd: path.resolve(dir, file.cwd ?? "."),
    stdinPath: stdinPath === null ? null : path.resolve(dir, stdinPath),
    idleMs,
    wallMs: file.wallMs ?? backend.defaults.wallMs,
    stallMs: file.stallMs ?? defaultStallMs(idleMs),
    killGraceMs: file.killGraceMs ?? SPEC_DEFAULTS.killGraceMs,
    graceAfterFinalMs:
      file.graceAfterFinalMs === undefined ? backend.defaults.graceAfterFinalMs : file.graceAfterFinalMs,
    pollMs: file.pollMs ?? SPEC_DEFAULTS.pollMs,
    providerRetry: {
      attempts: file.providerRetry?.attempts ?? SPEC_DEFAULTS.providerRetry.attempts,
      windowMs: file.providerRetry?.windowMs ?? SPEC_DEFAULTS.providerRetry.windowMs,
    },
  };
}
