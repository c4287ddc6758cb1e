import * as fs from "node:fs";
import * as path from "node:path";
import { type Blocked, blockerOf, type Caps, type Slot } from "../domain/admission.js";
import { CatherdError } from "../domain/errors.js";
import { makeDispatchId } from "../domain/ids.js";
import {
  type AdmitFile,
  type LadderFile,
  type QueuedFile,
  type RunFile,
  runFileSchema,
  SCHEMA_VERSION,
  type Spec,
  type SpecFile,
} from "../domain/schemas.js";
import type { BackendId } from "../domain/vocab.js";
import { FILES } from "../folder/layout.js";
import { writeLiveMarker } from "../folder/markers.js";
import { resolveSpec } from "../folder/spec.js";
import { writeBrief, writeFolderJson } from "../folder/write.js";
import { makeDir, writeFileAtomic, writeJsonAtomic } from "../infra/atomic.js";
import { readJsonFile } from "../infra/json-file.js";
import { dispatchDir, nameDir, type RunPaths, runPaths } from "../infra/paths.js";
import { startTimeOf } from "../infra/process-identity.js";
import { underAdmissionLock } from "./admission-lock.js";
import { LiveSet } from "./live-set.js";
import { ownsOverlap } from "./owns.js";
import { capsOf, ownsConflict, promoteUnderLock } from "./queue.js";
import type { ChainRequest, DispatchRequest } from "./request.js";
import { type Placed, placeDispatch, planWorkplace, type Workplace } from "./workplace.js";

export { ADMISSION_LOCK_STALE_MS, ADMISSION_LOCK_WAIT_MS } from "./admission-lock.js";

export interface Admitted {
  run: RunPaths;
  name: string;
  dispatchId: string;
  dir: string;
  admit: AdmitFile;
  /** spec.json as written: every default resolved. */
  spec: Spec;
  /** queued.json when it was admitted queued (`--queue`): its supervisor is started by a promotion. */
  queued: QueuedFile | null;
  /** Queued dispatches of the run promoted on the way: the dispatcher launches their supervisors too. */
  promoted: string[];
}

/**
 * Admission (design.md §7): write brief.md and spec.json under a hidden staging name; then under the run's
 * lock promote what the queue can start (oldest first, so that a newcomer never jumps the queue), refuse a
 * live duplicate name, and refuse — or with `--queue`, admit queued — a dispatch blocked by an overlapping
 * --owns, the run's cap or its backend's cap; else write admit.json, rename the folder into place and write
 * the name's `latest` and the live marker. Most of the fsyncs, slow on a busy disk, happen before the lock.
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
    const admitted = await underAdmissionLock(run, async () => {
      const runFile = ensureRunFile(run, request, now());
      // Resolved in the agent's own folder: dispatches in different worktrees never overlap.
      const ownsAbsolute = request.owns.map((p) => absoluteOwn(staged.admit.cwd, p));
      const live = new LiveSet(run);
      await refuseDuplicate(request, live);
      const { slots, toLaunch } = await promoteUnderLock(live, capsOf(runFile), now());
      const blocked = blockerOf(
        { backend: request.backend.id, owns: ownsAbsolute, notBefore: null },
        slots,
        capsOf(runFile),
        now().getTime(),
        ownsConflict,
      );
      if (blocked !== null && !request.queue) throw refusal(request, blocked, slots);
      const result = commitDispatch(run, staged, ownsAbsolute, queuedFile(blocked, null, now()), now());
      committed = true;
      return { ...result, promoted: toLaunch };
    });
    return admitted;
  } finally {
    // Refused, or the lock never came: nothing of this dispatch remains.
    if (!committed) fs.rmSync(staged.staging, { recursive: true, force: true });
  }
}

/**
 * The next attempt of a chain, admitted by its hand-over (dispatch/hand-over.ts) under the run's lock,
 * which the caller holds: queued when something blocks it (a cap, an overlap, or its `notBefore`), else
 * admitted to start now — the caller launches its supervisor once the lock is released. Refusals are
 * thrown as for `dispatch` (a --worktree git refuses, a folder that cannot be written).
 */
export async function admitAttemptUnderLock(
  run: RunPaths,
  request: DispatchRequest,
  slots: readonly Slot[],
  caps: Caps,
  now: Date,
): Promise<{ dir: string; dispatchId: string; queued: boolean }> {
  const workplace = await planWorkplace(request);
  const staged = stageDispatch(request, run, workplace, now);
  try {
    const ownsAbsolute = request.owns.map((p) => absoluteOwn(staged.admit.cwd, p));
    const notBefore = request.chain?.notBefore ?? null;
    const blocked = blockerOf(
      {
        backend: request.backend.id,
        owns: ownsAbsolute,
        notBefore: notBefore === null ? null : Date.parse(notBefore),
      },
      slots,
      caps,
      now.getTime(),
      ownsConflict,
    );
    const result = commitDispatch(run, staged, ownsAbsolute, queuedFile(blocked, notBefore, now), now);
    return { dir: result.dir, dispatchId: result.dispatchId, queued: result.queued !== null };
  } catch (error) {
    fs.rmSync(staged.staging, { recursive: true, force: true });
    throw error;
  }
}

/** queued.json for a dispatch `blocked` at admission (with --queue, or a chain's next attempt); else null. */
function queuedFile(blocked: Blocked | null, notBefore: string | null, at: Date): QueuedFile | null {
  if (blocked === null) return null;
  return { schema: SCHEMA_VERSION, since: at.toISOString(), ...blocked, blocker: blocked.blocker, notBefore };
}

/** run.json, created on the first admission; the caps a dispatch gives are remembered for the next. */
function ensureRunFile(run: RunPaths, request: DispatchRequest, at: Date): RunFile {
  const read = readJsonFile(run.runFile, runFileSchema);
  let file: RunFile =
    read.kind === "ok" ? read.value : { schema: SCHEMA_VERSION, id: run.run, createdAt: at.toISOString() };
  if (read.kind === "invalid" && read.error.code === "E_SCHEMA_NEWER") throw read.error;
  const perBackend = { ...(file.maxParallelBackend ?? {}), ...request.maxParallelBackend };
  const notifyChanged = request.runNotify !== undefined && (file.notify ?? null) !== request.runNotify;
  const capsChanged =
    notifyChanged ||
    (request.maxParallel !== null && file.maxParallel !== request.maxParallel) ||
    Object.entries(request.maxParallelBackend).some(
      ([backend, cap]) => file.maxParallelBackend?.[backend as BackendId] !== cap,
    );
  if (read.kind !== "ok" || capsChanged) {
    file = {
      ...file,
      maxParallel: request.maxParallel ?? file.maxParallel ?? null,
      ...(Object.keys(perBackend).length > 0 ? { maxParallelBackend: perBackend } : {}),
      ...(request.runNotify === undefined ? {} : { notify: request.runNotify }),
    };
    writeJsonAtomic(run.runFile, file);
  }
  return file;
}

function absoluteOwn(cwd: string, own: string): string {
  const resolved = path.resolve(cwd, own);
  return own.endsWith("/") ? `${resolved}/` : resolved;
}

/** A live dispatch — queued ones too — with the same name: E_ADMIT_DUPLICATE, with or without --queue. */
async function refuseDuplicate(request: DispatchRequest, live: LiveSet): Promise<void> {
  if (request.name === null) return;
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

/** The error for a dispatch blocked without --queue: it names the blocker and the way around it. */
function refusal(request: DispatchRequest, blocked: Blocked, slots: readonly Slot[]): CatherdError {
  const b = blocked.blocker ?? {};
  const queue = "add --queue to wait in the run's queue";
  if (blocked.blockedBy === "overlap") {
    const theirs = slots
      .find((s) => s.dispatchId === b.dispatchId)
      ?.owns.find((o) => ownsOverlap(o, b.owns ?? ""));
    return new CatherdError(
      "E_ADMIT_OVERLAP",
      `--owns ${b.owns} overlaps ${theirs ?? b.owns}, owned by live dispatch ${b.name} (${b.dispatchId})`,
      { fix: `wait for ${b.name} (catherd wait ${b.name}), narrow --owns, or ${queue}` },
    );
  }
  if (blocked.blockedBy === "backend-cap") {
    return new CatherdError(
      "E_ADMIT_CAPACITY",
      `run ${request.run} is at its cap of ${b.cap} live ${b.backend} dispatches`,
      {
        fix: `wait for one to finish (catherd wait --any --run ${request.run}), raise --max-parallel-backend ${b.backend}=<n>, or ${queue}`,
      },
    );
  }
  return new CatherdError(
    "E_ADMIT_CAPACITY",
    `run ${request.run} is at its cap of ${b.cap} live dispatches`,
    {
      fix: `wait for one to finish (catherd wait --any --run ${request.run}), raise --max-parallel, or ${queue}`,
    },
  );
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
function commitDispatch(
  run: RunPaths,
  staged: Staged,
  owns: string[],
  queued: QueuedFile | null,
  at: Date,
): Omit<Admitted, "promoted"> {
  const { dispatchId, name, dir } = staged;
  let renamed = false;
  try {
    // queued.json before admit.json: a folder is never seen admitted to start at once and then queued.
    if (queued !== null) {
      const { schema: _schema, ...body } = queued;
      writeFolderJson(staged.staging, FILES.queued, body);
    }
    // admit.json last, stamped now: a dispatch is admitted when the decision is made, not when it waited
    // for the lock.
    const admitFile: AdmitFile = { ...staged.admit, admittedAt: at.toISOString() };
    writeFolderJson(staged.staging, FILES.admit, admitFile);
    fs.renameSync(staged.staging, dir);
    renamed = true;
    writeFileAtomic(path.join(nameDir(run, name), "latest"), `${dispatchId}\n`);
    writeLiveMarker(run.live, {
      dispatchId,
      name,
      dir,
      owns,
      backend: staged.admit.backend,
      ...(queued === null ? {} : { queued: { since: queued.since, notBefore: queued.notBefore } }),
    });
    return { run, name, dispatchId, dir, admit: admitFile, spec: staged.spec, queued };
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
    memoryBytes: request.memoryBytes,
    maxProcs: request.maxProcs,
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
    attempt: request.chain?.attempt ?? 1,
    failoverFrom: request.chain?.failoverFrom ?? null,
    ...(request.chain === null ? {} : { ladder: ladderOf(request, request.chain) }),
    ...(request.notify == null ? {} : { notify: request.notify }),
  };
  return { admit, spec };
}

/** admit.json's `ladder`: the chain's future, and what its next attempts repeat of this request. */
function ladderOf(request: DispatchRequest, chain: ChainRequest): LadderFile {
  return {
    rungs: chain.rungs,
    retryWithinMs: chain.retryWithinMs,
    retries: chain.retries,
    rung: { backend: request.backend.id, model: request.model, bin: request.bin },
    request: {
      cwd: request.cwd,
      effort: request.effort,
      access: request.access,
      thread: chain.thread,
      envNames: Object.keys(request.env),
      idleMs: request.idleMs,
      wallMs: request.wallMs,
      killGraceMs: request.killGraceMs,
      memoryBytes: request.memoryBytes,
      maxProcs: request.maxProcs,
      worktree: request.isolation.worktree,
      passEnv: request.isolation.passEnv,
      keepTmp: request.isolation.keepTmp,
      extraArgs: request.extraArgs,
    },
  };
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
