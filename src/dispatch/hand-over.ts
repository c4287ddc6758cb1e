import * as fs from "node:fs";
import * as path from "node:path";
import { backendFor } from "../backends/registry.js";
import type { Caps, Slot } from "../domain/admission.js";
import { CatherdError } from "../domain/errors.js";
import { isValidId } from "../domain/ids.js";
import type { NextStep } from "../domain/ladder.js";
import type { AdmitFile, NextFile, SpecFile } from "../domain/schemas.js";
import { handOverPending, nextStepOf } from "../folder/chain.js";
import { FILES, fileIn } from "../folder/layout.js";
import { removeLiveMarkerOf } from "../folder/markers.js";
import { notifyIfEnded } from "../folder/notify.js";
import { readFolderJson } from "../folder/read.js";
import { createFolderJson } from "../folder/write.js";
import { okValue } from "../infra/json-file.js";
import type { RunPaths } from "../infra/paths.js";
import { underAdmissionLock } from "./admission-lock.js";
import { admitAttemptUnderLock } from "./admit.js";
import { inspectDispatch } from "./inspect.js";
import type { DispatchRequest } from "./request.js";

// The hand-over of a chain (specs/dispatch.md, "The failover ladder"): once an attempt's record names a
// `next`, the next attempt is admitted and next.json is written in the recorded attempt's folder. It runs
// under the run's admission lock, inside promotion, so that whoever promotes the run — the supervisor's
// promoter right after the record, or any reader after a crash — finishes it, and only one does. It is
// idempotent: an attempt already admitted (a hand-over that died before next.json) is found by its
// `failoverFrom` and named, never admitted twice.

/**
 * Under the run's admission lock (held by the caller): hands over the chain of the recorded attempt
 * `dir` when its record names a `next` and next.json is not written yet. Returns the next attempt's folder
 * when it was admitted to start now (its supervisor is the caller's to launch), else null: nothing to do,
 * or the next attempt queued, or the chain stopped. A `cancel` file in the folder stops the chain there;
 * an attempt that cannot be admitted ends it with the refusal's words in next.json (never a chain stuck
 * half-way).
 */
export async function handOverUnderLock(
  run: RunPaths,
  dir: string,
  slots: readonly Slot[],
  caps: Caps,
  now: Date,
): Promise<string | null> {
  const view = inspectDispatch(dir);
  const record = view.record;
  if (record === null || !handOverPending(dir, record)) return null;
  const at = now.toISOString();
  if (fs.existsSync(fileIn(dir, FILES.cancel))) {
    writeNext(dir, { at, dispatchId: null, stopped: "cancelled", message: "the chain was cancelled" });
    return null;
  }
  const existing = admittedAfter(dir, view.dispatchId);
  if (existing !== null) {
    writeNext(dir, { at, dispatchId: existing, stopped: null, message: null });
    return null;
  }
  const step = view.admit === null ? null : nextStepOf(view.admit, record);
  if (step === null || view.admit === null) {
    writeNext(dir, { at, dispatchId: null, stopped: "refused", message: "admit.json names no ladder" });
    return null;
  }
  try {
    const request = nextRequest(dir, view.admit, okValue(readFolderJson(dir, FILES.spec)), step);
    const admitted = await admitAttemptUnderLock(run, request, slots, caps, now);
    writeNext(dir, { at, dispatchId: admitted.dispatchId, stopped: null, message: null });
    return admitted.queued ? null : admitted.dir;
  } catch (error) {
    const message = error instanceof CatherdError ? `${error.code}: ${error.message}` : String(error);
    writeNext(dir, { at, dispatchId: null, stopped: "refused", message });
    return null;
  }
}

/** The hand-over is done: next.json, created once, and the live marker the chain kept goes. */
function writeNext(dir: string, next: Omit<NextFile, "schema">): void {
  // A chain stopped here ends here: its notification is due (before the marker goes, as for a record).
  if (createFolderJson(dir, FILES.next, next) && next.dispatchId === null) notifyIfEnded(dir);
  removeLiveMarkerOf(dir);
}

/** An attempt already admitted after `dispatchId` (a hand-over that died before next.json), or null. */
function admittedAfter(dir: string, dispatchId: string): string | null {
  const nameDir = path.dirname(dir);
  let ids: string[];
  try {
    ids = fs.readdirSync(nameDir);
  } catch {
    return null;
  }
  // Ids sort by creation time: only folders made after this attempt can follow it.
  for (const id of ids.filter((i) => isValidId(i) && i > dispatchId).sort()) {
    const admit = okValue(readFolderJson(path.join(nameDir, id), FILES.admit));
    if (admit?.failoverFrom === dispatchId) return id;
  }
  return null;
}

/**
 * The request of the next attempt: the recorded one's name, brief, cwd, owns, access, timeouts, caps and
 * isolation, on the step's backend and model. On another backend, what only means something to the
 * first — `--effort`, `--thread`, the arguments after `--` — is left out.
 */
function nextRequest(dir: string, admit: AdmitFile, spec: SpecFile | null, step: NextStep): DispatchRequest {
  const ladder = admit.ladder;
  if (ladder === undefined) throw new Error("admit.json names no ladder");
  const asked = ladder.request;
  const sameBackend = step.backend === ladder.rung.backend;
  let brief: Buffer | null = null;
  try {
    brief = fs.readFileSync(fileIn(dir, FILES.brief));
  } catch {
    // a backend that runs without a brief (exec) has none
  }
  const env: Record<string, string> = {};
  for (const name of asked.envNames) {
    const value = spec?.env[name];
    if (value !== undefined) env[name] = value;
  }
  return {
    backend: backendFor(step.backend),
    name: admit.name,
    run: admit.run,
    cwd: asked.cwd,
    model: step.model,
    effort: sameBackend ? asked.effort : null,
    access: asked.access,
    maxParallel: null,
    maxParallelBackend: {},
    queue: true,
    env,
    brief,
    thread: sameBackend ? asked.thread : null,
    owns: admit.owns,
    idleMs: asked.idleMs,
    wallMs: asked.wallMs,
    killGraceMs: asked.killGraceMs,
    memoryBytes: asked.memoryBytes,
    maxProcs: asked.maxProcs,
    bin: step.bin,
    extraArgs: sameBackend ? asked.extraArgs : [],
    isolation: { worktree: asked.worktree, passEnv: asked.passEnv, keepTmp: asked.keepTmp },
    chain: {
      rungs: step.ladder.rungs,
      retryWithinMs: step.ladder.retryWithinMs,
      retries: step.ladder.retries,
      attempt: (admit.attempt ?? 1) + 1,
      failoverFrom: admit.dispatchId,
      notBefore: step.notBefore,
      thread: asked.thread,
    },
  };
}

/**
 * `cancel` of a chain whose last attempt is recorded and not yet handed over: under the run's lock, the
 * hand-over is written as stopped (`cancelled`), so that no later promotion starts another attempt.
 */
export async function stopChain(run: RunPaths, dir: string): Promise<void> {
  await underAdmissionLock(run, async () => {
    const view = inspectDispatch(dir);
    if (!handOverPending(dir, view.record)) return;
    writeNext(dir, {
      at: new Date().toISOString(),
      dispatchId: null,
      stopped: "cancelled",
      message: "the chain was cancelled",
    });
  });
}
