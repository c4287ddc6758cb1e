import * as fs from "node:fs";
import * as path from "node:path";
import { CatherdError } from "../domain/errors.js";
import { makeDispatchId } from "../domain/ids.js";
import {
  type AdmitFile,
  type RunFile,
  runFileSchema,
  SCHEMA_VERSION,
  type Spec,
  type SpecFile,
} from "../domain/schemas.js";
import { FILES } from "../folder/layout.js";
import { writeLiveMarker } from "../folder/markers.js";
import { resolveSpec } from "../folder/spec.js";
import { writeBrief, writeFolderJson } from "../folder/write.js";
import { makeDir, writeFileAtomic, writeJsonAtomic } from "../infra/atomic.js";
import { readJsonFile } from "../infra/json-file.js";
import { lockWithin } from "../infra/lock.js";
import { dispatchDir, nameDir, type RunPaths, runPaths } from "../infra/paths.js";
import { startTimeOf } from "../infra/process-identity.js";
import { LiveSet } from "./live-set.js";
import { ownsOverlap } from "./owns.js";
import type { DispatchRequest } from "./request.js";
import { type Placed, placeDispatch, planWorkplace, type Workplace } from "./workplace.js";

/** A held admission lock older than this is taken over: its dispatcher died. */
export const ADMISSION_LOCK_STALE_MS = 5000;
/** How long a dispatch waits for the run's admission lock before E_IO_LOCK. */
export const ADMISSION_LOCK_WAIT_MS = 30_000;

export interface Admitted {
  run: RunPaths;
  name: string;
  dispatchId: string;
  dir: string;
  admit: AdmitFile;
  /** spec.json as written: every default resolved. */
  spec: Spec;
}

/**
 * Admission (design.md §7): write brief.md and spec.json under a hidden staging name; then under the run's
 * lock refuse a live duplicate name, overlapping --owns, or a full run, else write admit.json, rename the
 * folder into place and write the name's `latest` and the live marker. Most of the fsyncs, slow on a busy
 * disk, happen before the lock.
 */
export async function admit(request: DispatchRequest, home: string, now: () => Date): Promise<Admitted> {
  const run = runPaths(home, request.run);
  // First, and outside the lock: git can take a while in a big tree, it describes the work tree, not the
  // run, and a --worktree it refuses must leave nothing written.
  const workplace = await planWorkplace(request);
  makeDir(run.dispatches);
  makeDir(run.live);
  const staged = stageDispatch(request, run, workplace, now());
  let committed = false;
  try {
    const release = await lockWithin(run.dir, {
      lockPath: run.admissionLock,
      staleMs: ADMISSION_LOCK_STALE_MS,
      waitMs: ADMISSION_LOCK_WAIT_MS,
    });
    try {
      const runFile = ensureRunFile(run, request.maxParallel, now());
      // Resolved in the agent's own folder: dispatches in different worktrees never overlap.
      const ownsAbsolute = request.owns.map((p) => absoluteOwn(staged.admit.cwd, p));
      await refuseConflicts(request, ownsAbsolute, new LiveSet(run), runFile.maxParallel ?? null);
      const admitted = commitDispatch(run, staged, ownsAbsolute, now());
      committed = true;
      return admitted;
    } finally {
      await release().catch(() => {});
    }
  } finally {
    // Refused, or the lock never came: nothing of this dispatch remains.
    if (!committed) fs.rmSync(staged.staging, { recursive: true, force: true });
  }
}

function ensureRunFile(run: RunPaths, maxParallel: number | null, at: Date): RunFile {
  const read = readJsonFile(run.runFile, runFileSchema);
  let file: RunFile =
    read.kind === "ok" ? read.value : { schema: SCHEMA_VERSION, id: run.run, createdAt: at.toISOString() };
  if (read.kind === "invalid" && read.error.code === "E_SCHEMA_NEWER") throw read.error;
  if (read.kind !== "ok" || (maxParallel !== null && file.maxParallel !== maxParallel)) {
    file = { ...file, maxParallel: maxParallel ?? file.maxParallel ?? null };
    writeJsonAtomic(run.runFile, file);
  }
  return file;
}

function absoluteOwn(cwd: string, own: string): string {
  const resolved = path.resolve(cwd, own);
  return own.endsWith("/") ? `${resolved}/` : resolved;
}

async function refuseConflicts(
  request: DispatchRequest,
  owns: string[],
  live: LiveSet,
  storedCap: number | null,
) {
  if (request.name !== null) {
    for (const same of live.markers.filter((m) => m.name === request.name)) {
      if (!(await live.isLive(same))) continue;
      throw new CatherdError(
        "E_ADMIT_DUPLICATE",
        `a dispatch named ${request.name} is still live (${same.dispatchId})`,
        {
          fix: `wait for it (catherd wait ${request.name}), cancel it (catherd cancel ${request.name}), or pick another --name`,
        },
      );
    }
  }
  for (const marker of live.markers) {
    for (const mine of owns) {
      const theirs = marker.owns.find((other) => ownsOverlap(mine, other));
      if (theirs !== undefined && (await live.isLive(marker))) {
        throw new CatherdError(
          "E_ADMIT_OVERLAP",
          `--owns ${mine} overlaps ${theirs}, owned by live dispatch ${marker.name} (${marker.dispatchId})`,
          {
            fix: `wait for ${marker.name} (catherd wait ${marker.name}) or narrow --owns`,
          },
        );
      }
    }
  }
  const cap = request.maxParallel ?? storedCap;
  // Fewer markers than the cap: fewer live dispatches too, without looking at any of them.
  if (cap !== null && live.markers.length >= cap && (await live.liveCount()) >= cap) {
    throw new CatherdError("E_ADMIT_CAPACITY", `run ${request.run} is at its cap of ${cap} live dispatches`, {
      fix: `wait for one to finish (catherd wait --any --run ${request.run}) or raise --max-parallel`,
    });
  }
}

interface Staged {
  dispatchId: string;
  name: string;
  dir: string;
  staging: string;
  admit: AdmitFile;
  spec: Spec;
}

/**
 * Writes brief.md and spec.json under the folder's hidden staging name (admit.json comes at the commit);
 * E_IO_WRITE, and nothing left, when it cannot.
 */
function stageDispatch(request: DispatchRequest, run: RunPaths, workplace: Workplace, at: Date): Staged {
  const { dispatchId, dir, staging, name } = createFolder(request, run, at);
  try {
    const placed = placeDispatch(workplace, request, run, name, dispatchId);
    const written = writeFolder(request, staging, dir, dispatchId, name, placed, at);
    return { dispatchId, name, dir, staging, ...written };
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw writeFailed(dir, error);
  }
}

/**
 * Writes admit.json and renames the staged folder into place — it appears whole or not at all: a
 * dispatcher killed halfway leaves only a hidden staging folder — then writes `latest` and the live marker.
 */
function commitDispatch(run: RunPaths, staged: Staged, owns: string[], at: Date): Admitted {
  const { dispatchId, name, dir } = staged;
  let renamed = false;
  try {
    // admit.json last, stamped now: a dispatch is admitted when the decision is made, not when it queued.
    const admitFile: AdmitFile = { ...staged.admit, admittedAt: at.toISOString() };
    writeFolderJson(staged.staging, FILES.admit, admitFile);
    fs.renameSync(staged.staging, dir);
    renamed = true;
    writeFileAtomic(path.join(nameDir(run, name), "latest"), `${dispatchId}\n`);
    writeLiveMarker(run.live, { dispatchId, name, dir, owns });
    return { run, name, dispatchId, dir, admit: admitFile, spec: staged.spec };
  } catch (error) {
    // Nothing was started yet: no trace of a dispatch that failed to be written.
    if (renamed) fs.rmSync(dir, { recursive: true, force: true });
    throw writeFailed(dir, error);
  }
}

function writeFailed(dir: string, error: unknown): CatherdError {
  const message = error instanceof Error ? error.message : String(error);
  return new CatherdError("E_IO_WRITE", `cannot write the dispatch folder ${dir}: ${message}`, {
    fix: "free disk space (or fix the permissions of CATHERD_HOME), then dispatch again",
    cause: error,
  });
}

/**
 * brief.md and spec.json into the staging folder; returns the admit.json to write last and the spec
 * written. Paths name the final folder. spec.json holds the spec resolved (every default applied), so
 * that it says what will run.
 */
function writeFolder(
  request: DispatchRequest,
  staging: string,
  dir: string,
  dispatchId: string,
  name: string,
  placed: Placed,
  at: Date,
): { admit: AdmitFile; spec: Spec } {
  if (request.brief !== null) writeBrief(staging, request.brief);
  const plan = request.backend.plan({
    bin: request.bin,
    briefPath: request.brief === null ? null : path.join(dir, FILES.brief),
    model: request.model,
    effort: request.effort,
    access: request.access,
    thread: request.thread,
    extraArgs: request.extraArgs,
  });
  // What the request says, in spec.json's order; resolveSpec fills in the rest.
  const asked: SpecFile = {
    schema: SCHEMA_VERSION,
    dispatchId,
    backend: request.backend.id,
    cmd: plan.cmd,
    args: plan.args,
    env: { ...plan.env, ...request.env },
    cwd: placed.cwd,
    stdinPath: plan.stdin === "brief" && request.brief !== null ? FILES.brief : null,
    idleMs: request.idleMs ?? undefined,
    wallMs: request.wallMs ?? undefined,
    stallMs: undefined,
    killGraceMs: request.killGraceMs ?? undefined,
    worktree: placed.worktree,
    passEnv: request.isolation.passEnv,
    keepTmp: request.isolation.keepTmp,
  };
  const spec = resolveSpec(asked, request.backend, dir);
  writeFolderJson(staging, FILES.spec, spec);
  const admit: AdmitFile = {
    schema: SCHEMA_VERSION,
    dispatchId,
    run: request.run,
    name,
    backend: request.backend.id,
    model: request.model,
    cwd: placed.cwd,
    owns: request.owns,
    admittedAt: at.toISOString(),
    dispatcher: { pid: process.pid, startTime: startTimeOf(process.pid) },
    git: placed.git,
  };
  return { admit, spec };
}

/**
 * Picks a fresh id and creates its hidden staging folder `<name>/.<id>.admitting` exclusively (readers skip
 * it: not a valid id); a colliding id (same second, same suffix) draws again.
 */
function createFolder(request: DispatchRequest, run: RunPaths, at: Date) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const dispatchId = makeDispatchId(at, Math.random);
    const name = request.name ?? `${request.backend.id}-${dispatchId.slice(-6)}`;
    makeDir(nameDir(run, name));
    const dir = dispatchDir(run, name, dispatchId);
    const staging = path.join(nameDir(run, name), `.${dispatchId}.admitting`);
    if (fs.existsSync(dir)) continue;
    try {
      fs.mkdirSync(staging, { mode: 0o700 });
      fs.chmodSync(staging, 0o700);
      return { dispatchId, dir, staging, name };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  throw new CatherdError("E_IO_WRITE", `could not create a unique dispatch folder under ${run.dispatches}`);
}
