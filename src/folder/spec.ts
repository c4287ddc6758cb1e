import * as path from "node:path";
import type { Backend } from "../backends/types.js";
import { defaultStallMs, SPEC_DEFAULTS } from "../domain/defaults.js";
import { CatherdError } from "../domain/errors.js";
import { SCHEMA_VERSION, type Spec, type SpecFile } from "../domain/schemas.js";
import { agentDispatchId } from "./dispatch-id-of.js";
import { FILES, fileIn } from "./layout.js";
import { readFolderJson } from "./read.js";

/** Reads spec.json as written; throws E_SPEC_INVALID when it is missing, its own error when unreadable. */
export function readSpecFile(dir: string): SpecFile {
  const read = readFolderJson(dir, FILES.spec);
  if (read.kind === "ok") return read.value;
  if (read.kind === "missing") {
    throw new CatherdError("E_SPEC_INVALID", `${fileIn(dir, FILES.spec)} is missing`, {
      fix: "write spec.json (see specs/dispatch-folder.md) or use catherd dispatch",
    });
  }
  throw read.error;
}

/**
 * The one place a spec's defaults are applied (specs/dispatch-folder.md, "spec.json"): what `file` leaves
 * out takes the backend's timeouts and catherd's own; the id defaults to the folder's name, `cwd` to the
 * folder itself. Admission writes the spec this returns; the supervisor runs it. Paths stay as written
 * (absolute, or relative to the folder: see `absolutePaths`). Fields it does not know are kept.
 */
export function resolveSpec(file: SpecFile, backend: Backend, dir: string): Spec {
  const idleMs = file.idleMs ?? backend.defaults.idleMs;
  return {
    ...file,
    schema: SCHEMA_VERSION,
    dispatchId: agentDispatchId({ dir, spec: file }),
    backend: backend.id,
    cmd: file.cmd,
    args: file.args,
    env: file.env,
    cwd: file.cwd ?? ".",
    stdinPath: file.stdinPath ?? null,
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
    memoryBytes: file.memoryBytes ?? null,
    maxProcs: file.maxProcs ?? null,
    worktree: file.worktree ?? null,
    passEnv: file.passEnv ?? [],
    keepTmp: file.keepTmp ?? false,
    maxTokens: file.maxTokens ?? null,
    maxCostUsd: file.maxCostUsd ?? null,
  };
}

/** The spec with `cwd` and `stdinPath` made absolute: relative ones are relative to the folder `dir`. */
export function absolutePaths(spec: Spec, dir: string): Spec {
  return {
    ...spec,
    cwd: path.resolve(dir, spec.cwd),
    stdinPath: spec.stdinPath === null ? null : path.resolve(dir, spec.stdinPath),
  };
}
