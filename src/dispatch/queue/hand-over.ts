import * as fs from "node:fs";
import * as path from "node:path";
import { backendFor } from "../../backends/backend-registry.js";
import type { Caps, Slot } from "../../domain/admission/admission-rules.js";
import type { NextStep } from "../../domain/admission/ladder.js";
import { checkRepairBrief } from "../../domain/check/check.js";
import { repairBrief } from "../../domain/ending/answer-contract.js";
import { CatherdError } from "../../domain/errors.js";
import { isValidId } from "../../domain/ids.js";
import type { AdmitFile, NextFile, RecordFile, SpecFile } from "../../domain/schemas.js";
import { handOverPending, nextStepOf } from "../../folder/chain.js";
import { FILES, fileIn, runOf } from "../../folder/layout.js";
import { removeLiveMarkerOf } from "../../folder/markers.js";
import { notifyIfEnded } from "../../folder/notify.js";
import { readFolderJson } from "../../folder/read.js";
import { createFolderJson } from "../../folder/write.js";
import type { Clock } from "../../infra/clock.js";
import { okValue } from "../../infra/json-file.js";
import type { RunPaths } from "../../infra/paths.js";
import { accountFileOf, startDecision } from "../admit/account-file.js";
import { underAdmissionLock } from "../admit/admission-lock.js";
import { commitDispatch, discardStaged, queuedFile, type Staged, stageDispatch } from "../admit/stage.js";
import { planWorkplace } from "../admit/workplace.js";
import { inspectDispatch } from "../read/inspect.js";
import { nextLink } from "../request/chain.js";
import type { Recorded } from "../request/concern.js";
import { type DispatchRequest, nextAttemptRequest } from "../request/dispatch-request.js";

// The hand-over of a chain (specs/dispatch.md §8): once an attempt's record names a `next`, the next
// attempt is admitted and next.json is written in the recorded attempt's folder. It runs under the run's
// admission lock, inside promotion, so that whoever promotes the run — the supervisor's promoter right
// after the record, or any reader after a crash — finishes it, and only one does. The next attempt is
// planned before the lock, as a new dispatch is: its request, its workplace (git) and its staged folder.
// It is idempotent: an attempt already admitted (a hand-over that died before next.json) is found by its
// `failoverFrom` and named, never admitted twice.

/** A due hand-over, prepared outside the lock. */
export interface PlannedHandOver {
  /** The recorded attempt. */
  dir: string;
  /** The next attempt, staged; null when it could not be planned (then `refusal` says why). */
  staged: Staged | null;
  /** Not to start before this time (a timed retry), or null. */
  notBefore: string | null;
  /** Why the next attempt cannot be admitted: its words go into next.json `message`. */
  refusal: string | null;
  /** Set once its staged folder is committed: it must not be discarded then. */
  committed: boolean;
}

/**
 * Plans the hand-overs of these recorded attempts, outside the run's lock: for each whose chain is still
 * due, the next attempt's request from the recorded one, its workplace, and its folder staged.
 */
export async function planHandOvers(
  dirs: readonly string[],
  clock: Clock,
): Promise<Map<string, PlannedHandOver>> {
  const planned = new Map<string, PlannedHandOver>();
  for (const dir of dirs) {
    const view = inspectDispatch(dir, { clock });
    if (view.record === null || !handOverPending(dir, view.record)) continue;
    const step = view.admit === null ? null : nextStepOf(view.admit, view.record);
    const plan: PlannedHandOver = { dir, staged: null, notBefore: null, refusal: null, committed: false };
    planned.set(dir, plan);
    if (step === null || view.admit === null) {
      plan.refusal = "admit.json names no ladder";
      continue;
    }
    try {
      const attempt = {
        dir,
        admit: view.admit,
        spec: okValue(readFolderJson(dir, FILES.spec)),
        record: view.record,
      };
      const request = nextRequest(attempt, step);
      const workplace = await planWorkplace(request);
      const run = runOfRequest(dir, request);
      plan.staged = stageDispatch(request, run, workplace, clock.wallNow());
      plan.notBefore = step.notBefore;
    } catch (error) {
      plan.refusal = error instanceof CatherdError ? `${error.code}: ${error.message}` : String(error);
    }
  }
  return planned;
}

/** Removes the staged folders of plans that were not committed (no longer due, or done by another). */
export function discardPlans(run: RunPaths, planned: ReadonlyMap<string, PlannedHandOver>): void {
  for (const plan of planned.values()) {
    if (plan.staged !== null && !plan.committed) discardStaged(run, plan.staged);
  }
}

/**
 * Under the run's admission lock (held by the caller): hands over the chain of the recorded attempt
 * `plan.dir` when its record names a `next` and next.json is not written yet. Returns the next attempt's
 * folder when it was admitted to start now (its supervisor is the caller's to launch), else null: nothing
 * to do, or the next attempt queued, or the chain stopped. A `cancel` file in the folder stops the chain
 * there; an attempt that cannot be admitted ends it with the refusal's words in next.json (never a chain
 * stuck half-way).
 */
export async function handOverUnderLock(
  run: RunPaths,
  plan: PlannedHandOver,
  live: LiveSet,
  clock: Clock,
): Promise<string | null> {
  const { dir } = plan;
  const view = inspectDispatch(dir, { clock });
  if (view.record === null || !handOverPending(dir, view.record)) return null;
  const at = clock.wallNow();
  const stamp = at.toISOString();
  if (fs.existsSync(fileIn(dir, FILES.cancel))) {
    writeNext(dir, { at: stamp, dispatchId: null, stopped: "cancelled", message: "the chain was cancelled" });
    return null;
  }
  const existing = admittedAfter(dir, view.dispatchId);
  if (existing !== null) {
    writeNext(dir, { at: stamp, dispatchId: existing, stopped: null, message: null });
    return null;
  }
  if (plan.staged === null) {
    writeNext(dir, { at: stamp, dispatchId: null, stopped: "refused", message: plan.refusal });
    return null;
  }
  return commitNext(run, plan, live, at);
}

/** The run's live slots and caps, as promotion read them under the lock. */
export interface LiveSet {
  slots: readonly Slot[];
  caps: Caps;
}

/**
 * Commits the planned next attempt, queued where the run's slots and caps block it, and writes next.json;
 * a refusal ends the chain with its words. Returns the folder to launch now, or null.
 */
function commitNext(run: RunPaths, plan: PlannedHandOver, live: LiveSet, at: Date): string | null {
  const { dir } = plan;
  const stamp = at.toISOString();
  try {
    const staged = plan.staged as Staged;
    const notBefore = plan.notBefore;
    const { blocked, account } = startDecision(
      {
        backend: staged.admit.backend,
        owns: staged.ownsAbsolute,
        notBefore: notBefore === null ? null : Date.parse(notBefore),
        accounts: staged.admit.accounts ?? null,
        tags: staged.admit.tags ?? [],
      },
      live.slots,
      live.caps,
      at.getTime(),
    );
    const committed = commitDispatch(
      run,
      staged,
      {
        queued: queuedFile(blocked, notBefore, at),
        account: accountFileOf(run.home, staged.admit.backend, account, at),
      },
      at,
    );
    plan.committed = true;
    writeNext(dir, { at: stamp, dispatchId: committed.dispatchId, stopped: null, message: null });
    return committed.queued === null ? committed.dir : null;
  } catch (error) {
    const message = error instanceof CatherdError ? `${error.code}: ${error.message}` : String(error);
    writeNext(dir, { at: stamp, dispatchId: null, stopped: "refused", message });
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

/** The run an attempt's folder is in: its name's folder's run, where the next attempt is admitted. */
function runOfRequest(dir: string, request: DispatchRequest): RunPaths {
  const run = runOf(dir);
  if (run === null || run.run !== request.run)
    throw new CatherdError("E_INPUT_INVALID", `${dir} is not a dispatch folder of run ${request.run}`);
  return run;
}

/** A recorded attempt of a chain, as its folder holds it. */
interface RecordedAttempt {
  dir: string;
  admit: AdmitFile;
  spec: SpecFile | null;
  record: RecordFile;
}

/**
 * The request of the next attempt: what every concern carries over of the recorded one
 * (dispatch-request.ts, nextAttemptRequest), on the step's backend, model and executable, as the chain's
 * next link. A repair (`why: "repair"`) resumes the recorded attempt's own thread with a brief of the
 * validator's errors.
 */
function nextRequest(attempt: RecordedAttempt, step: NextStep): DispatchRequest {
  const { admit, record } = attempt;
  const ladder = admit.ladder;
  if (ladder === undefined) throw new Error("admit.json names no ladder");
  const recorded = { ...readRecorded(attempt), ladder };
  const repair = step.why === "repair" ? repairBriefOf(recorded, record) : null;
  const backend = backendFor(step.backend);
  const carried = nextAttemptRequest(recorded, { kind: "next-attempt", backend, repair: repair !== null });
  return {
    ...carried,
    backend,
    model: step.model,
    bin: step.bin,
    chain: nextLink(admit, step, ladder.request.thread),
    ...(repair === null ? {} : { brief: Buffer.from(repair, "utf8"), thread: record.thread }),
  };
}

/**
 * A repair turn's brief: for a red check (`verify`), the check, its exit code and its output's tail; for an
 * answer that did not fit, the validator's errors and the schema the recorded attempt's folder holds.
 */
function repairBriefOf(recorded: Pick<Recorded, "spec"> & { answer: AnswerText | null }, record: RecordFile) {
  const check = recorded.spec?.verify;
  const lastRun = record.verify?.runs.at(-1);
  if (record.error?.kind === "verify" && check !== undefined && lastRun !== undefined) {
    return checkRepairBrief(check.command, lastRun);
  }
  const answer = recorded.answer;
  if (answer === null) throw new Error("a repair of an attempt with neither a red check nor a schema");
  return repairBrief(record.answerErrors ?? [], answer.text);
}

/** What a successor is made from (request/concern.ts), as the recorded attempt's folder holds it. */
function readRecorded({
  dir,
  admit,
  spec,
  record,
}: RecordedAttempt): Recorded & Pick<Required<Recorded>, "answer"> {
  return {
    spec,
    ladder: admit.ladder ?? null,
    admit,
    record,
    brief: briefOf(dir),
    answer: answerOf(dir, spec),
  };
}

/** The recorded attempt's brief.md, or null for a dispatch without one (exec). */
function briefOf(dir: string): Buffer | null {
  try {
    return fs.readFileSync(fileIn(dir, FILES.brief));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw unreadable(fileIn(dir, FILES.brief), error);
  }
}

/** The chain's answer schema as the recorded attempt's folder holds it (answer-schema.json), or null. */
/** An answer schema, parsed and as the folder holds it. */
type AnswerText = { schema: unknown; text: string };

function answerOf(dir: string, spec: SpecFile | null): AnswerText | null {
  if (spec?.answerSchema == null) return null;
  try {
    const text = fs.readFileSync(fileIn(dir, FILES.answerSchema), "utf8");
    return { schema: JSON.parse(text) as unknown, text };
  } catch (error) {
    throw unreadable(fileIn(dir, FILES.answerSchema), error);
  }
}

function unreadable(file: string, error: unknown): CatherdError {
  const why = error instanceof Error ? error.message : String(error);
  return new CatherdError("E_FILE_CORRUPT", `${file} cannot be read: ${why}`);
}

/**
 * `cancel` of a chain whose last attempt is recorded and not yet handed over: under the run's lock, the
 * hand-over is written as stopped (`cancelled`), so that no later promotion starts another attempt.
 */
export async function stopChain(run: RunPaths, dir: string, clock: Clock): Promise<void> {
  await underAdmissionLock(run, async () => {
    const view = inspectDispatch(dir, { clock });
    if (!handOverPending(dir, view.record)) return;
    writeNext(dir, {
      at: clock.wallNow().toISOString(),
      dispatchId: null,
      stopped: "cancelled",
      message: "the chain was cancelled",
    });
  });
}
