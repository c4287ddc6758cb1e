import * as fs from "node:fs";
import * as path from "node:path";
import { defaultStallMs, SPEC_DEFAULTS } from "../domain/defaults.js";
import { CatherdError } from "../domain/errors.js";
import { makeDispatchId } from "../domain/ids.js";
import { type AdmitFile, type RunFile, runFileSchema, SCHEMA_VERSION, type Spec } from "../domain/schemas.js";
import { makeDir, writeFileAtomic, writeJsonAtomic } from "../infra/atomic.js";
import { gitSnapshot } from "../infra/git.js";
import { readJsonFile } from "../infra/json-file.js";
import { lockWithin } from "../infra/lock.js";
import { dispatchDir, nameDir, type RunPaths, runPaths } from "../infra/paths.js";
import { startTimeOf } from "../infra/process-identity.js";
import { inspectDispatch } from "./inspect.js";
import { type LiveMarker, readLiveMarkers, removeLiveMarkerOf, writeLiveMarker } from "./live-index.js";
import { ownsOverlap } from "./owns.js";
import type { DispatchRequest } from "./request.js";
import { settleIfDead } from "./settle.js";

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
}

/**
 * Admission (design.md §7): under the run's lock, refuse a live duplicate name, overlapping --owns, or a
 * full run; then write the folder — brief.md, spec.json, admit.json last — and the name's `latest`.
 */
export async function admit(request: DispatchRequest, home: string, now: () => Date): Promise<Admitted> {
  const run = runPaths(home, request.run);
  makeDir(run.dispatches);
  makeDir(run.live);
  // Outside the lock: git can take a while in a big tree, and it describes the work tree, not the run.
  const git = await gitSnapshot(request.cwd);
  const release = await lockWithin(run.dir, {
    lockPath: run.admissionLock,
    staleMs: ADMISSION_LOCK_STALE_MS,
    waitMs: ADMISSION_LOCK_WAIT_MS,
  });
  try {
    const runFile = ensureRunFile(run, request.maxParallel, now());
    const live = await liveDispatches(run);
    const ownsAbsolute = request.owns.map((p) => absoluteOwn(request.cwd, p));
    refuseConflicts(request, ownsAbsolute, live, runFile.maxParallel ?? null);
    return writeDispatch(request, run, ownsAbsolute, git, now());
  } finally {
    await release().catch(() => {});
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

/** The run's live dispatches. Dead ones found on the way are recorded `lost` first, then no longer count. */
async function liveDispatches(run: RunPaths): Promise<LiveMarker[]> {
  const live: LiveMarker[] = [];
  for (const marker of readLiveMarkers(run.live)) {
    let view = inspectDispatch(marker.dir);
    if (view.state === "lost" || view.state === "exited") view = await settleIfDead(view);
    if (view.state === "recorded") {
      removeLiveMarkerOf(marker.dir);
      continue;
    }
    live.push(marker);
  }
  return live;
}

function absoluteOwn(cwd: string, own: string): string {
  const resolved = path.resolve(cwd, own);
  return own.endsWith("/") ? `${resolved}/` : resolved;
}

function refuseConflicts(
  request: DispatchRequest,
  owns: string[],
  live: LiveMarker[],
  storedCap: number | null,
) {
  if (request.name !== null) {
    const same = live.find((m) => m.name === request.name);
    if (same !== undefined) {
      throw new CatherdError(
        "E_ADMIT_DUPLICATE",
        `a dispatch named ${request.name} is still live (${same.dispatchId})`,
        {
          fix: `wait for it (catherd wait ${request.name}), cancel it (catherd cancel ${request.name}), or pick another --name`,
        },
      );
    }
  }
  for (const marker of live) {
    for (const mine of owns) {
      const theirs = marker.owns.find((other) => ownsOverlap(mine, other));
      if (theirs !== undefined) {
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
  if (cap !== null && live.length >= cap) {
    throw new CatherdError("E_ADMIT_CAPACITY", `run ${request.run} is at its cap of ${cap} live dispatches`, {
      fix: `wait for one to finish (catherd wait --any --run ${request.run}) or raise --max-parallel`,
    });
  }
}

function writeDispatch(
  request: DispatchRequest,
  run: RunPaths,
  owns: string[],
  git: AdmitFile["git"],
  at: Date,
): Admitted {
  const { dispatchId, dir, name } = createFolder(request, run, at);
  const briefPath = path.join(dir, "brief.md");
  if (request.brief !== null) writeFileAtomic(briefPath, request.brief);
  const plan = request.backend.plan({
    bin: request.bin,
    briefPath: request.brief === null ? null : briefPath,
    model: request.model,
    effort: request.effort,
    access: request.access,
    thread: request.thread,
    extraArgs: request.extraArgs,
  });
  const idleMs = request.idleMs ?? request.backend.defaults.idleMs;
  const spec: Spec = {
    schema: SCHEMA_VERSION,
    dispatchId,
    backend: request.backend.id,
    cmd: plan.cmd,
    args: plan.args,
    env: { ...plan.env, ...request.env },
    cwd: request.cwd,
    stdinPath: plan.stdin === "brief" && request.brief !== null ? "brief.md" : null,
    idleMs,
    wallMs: request.wallMs ?? request.backend.defaults.wallMs,
    stallMs: defaultStallMs(idleMs),
    killGraceMs: request.killGraceMs ?? SPEC_DEFAULTS.killGraceMs,
    graceAfterFinalMs: request.backend.defaults.graceAfterFinalMs,
    pollMs: SPEC_DEFAULTS.pollMs,
    providerRetry: { ...SPEC_DEFAULTS.providerRetry },
  };
  writeJsonAtomic(path.join(dir, "spec.json"), spec);
  const admitFile: AdmitFile = {
    schema: SCHEMA_VERSION,
    dispatchId,
    run: request.run,
    name,
    backend: request.backend.id,
    model: request.model,
    cwd: request.cwd,
    owns: request.owns,
    admittedAt: at.toISOString(),
    dispatcher: { pid: process.pid, startTime: startTimeOf(process.pid) ?? "unknown" },
    git,
  };
  writeJsonAtomic(path.join(dir, "admit.json"), admitFile);
  writeFileAtomic(path.join(nameDir(run, name), "latest"), `${dispatchId}\n`);
  writeLiveMarker(run.live, { dispatchId, name, dir, owns });
  return { run, name, dispatchId, dir, admit: admitFile };
}

/** Creates the dispatch folder exclusively; a colliding id (same second, same suffix) draws again. */
function createFolder(request: DispatchRequest, run: RunPaths, at: Date) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const dispatchId = makeDispatchId(at, Math.random);
    const name = request.name ?? `${request.backend.id}-${dispatchId.slice(-6)}`;
    makeDir(nameDir(run, name));
    const dir = dispatchDir(run, name, dispatchId);
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
      fs.chmodSync(dir, 0o700);
      return { dispatchId, dir, name };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  throw new CatherdError("E_IO_WRITE", `could not create a unique dispatch folder under ${run.dispatches}`);
}
