import * as fs from "node:fs";
import * as path from "node:path";
import type { Blocked } from "../../domain/admission/admission-rules.js";
import { CatherdError } from "../../domain/errors.js";
import { makeDispatchId } from "../../domain/ids.js";
import {
  type AccountFile,
  type AdmitFile,
  type LadderFile,
  type QueuedFile,
  SCHEMA_VERSION,
  type Spec,
  type SpecFile,
} from "../../domain/schemas.js";
import { FILES } from "../../folder/layout.js";
import { writeLiveMarker } from "../../folder/markers.js";
import { resolveSpec } from "../../folder/spec.js";
import { writeBrief, writeFolderJson } from "../../folder/write.js";
import { makeDir, writeFileAtomic } from "../../infra/atomic.js";
import { hostIdentity } from "../../infra/host-identity.js";
import { dispatchDir, latestFile, nameDir, type RunPaths } from "../../infra/paths.js";
import { startTimeOf } from "../../infra/process-identity.js";
import { resolvedPath } from "../../infra/real-path.js";
import { accountChoice } from "../request/account-input.js";
import { agent, rungOf } from "../request/agent.js";
import { brief, composeBrief } from "../request/brief.js";
import { spendCaps } from "../request/caps-input.js";
import { chainAdmit, chainLadder } from "../request/chain.js";
import type { ChainRequest, DispatchRequest } from "../request/dispatch-request.js";
import { isolation } from "../request/isolation-input.js";
import { limits } from "../request/limits.js";
import { notify } from "../request/notify.js";
import { placement } from "../request/placement.js";
import { racing } from "../request/race-input.js";
import { steering } from "../request/steer-input.js";
import { tagging } from "../request/tag-input.js";
import { checking } from "../request/verify-input.js";
import { type Placed, placeDispatch, type Workplace } from "./workplace.js";

// A dispatch folder written in two steps (specs/dispatch.md §2, step 5), shared by admission and by a
// chain's hand-over: staged before the run's lock — brief.md and spec.json under a hidden name, the slow
// fsyncs — then committed under it: queued.json if it waits, admit.json last, the rename into place,
// `latest` and the live marker.

/** A folder written under its hidden staging name, waiting to be committed or removed. */
export interface Staged {
  dispatchId: string;
  name: string;
  /** Where it goes once committed. */
  dir: string;
  /** `<name>/.<id>.admitting`. */
  staging: string;
  /** admit.json as it will be written (`admittedAt` is stamped at the commit). */
  admit: AdmitFile;
  /** spec.json as written: every default resolved. */
  spec: Spec;
  /**
   * Its `--owns`, absolute in the agent's own folder and resolved as the file system does (real-path.ts):
   * what overlaps are judged by, so that a path named through a symbolic link is caught. Dispatches in
   * different worktrees never overlap.
   */
  ownsAbsolute: string[];
  /** The same paths absolute as the request named them, index for index: what a refusal quotes. */
  ownsGiven: string[];
}

/** A dispatch folder committed into its run. */
export interface Committed {
  run: RunPaths;
  name: string;
  dispatchId: string;
  dir: string;
  admit: AdmitFile;
  spec: Spec;
  /** queued.json when it was admitted to wait in the queue; its supervisor is started by a promotion. */
  queued: QueuedFile | null;
}

/**
 * Writes brief.md and spec.json under the folder's hidden staging name (admit.json comes at the commit);
 * E_IO_WRITE, and nothing left, when it cannot.
 */
export function stageDispatch(
  request: DispatchRequest,
  run: RunPaths,
  workplace: Workplace,
  at: Date,
): Staged {
  makeDir(run.dispatches);
  makeDir(run.live);
  const folder = createFolder(request, run, at);
  const { dispatchId, dir, staging, name } = folder;
  try {
    const placed = placeDispatch(workplace, request, run, folder);
    const written = writeFolder(request, folder, placed, at);
    const ownsGiven = request.owns.map((p) => absoluteOwn(written.admit.cwd, p));
    const ownsAbsolute = written.admit.resolved?.owns ?? ownsGiven;
    return { dispatchId, name, dir, staging, ownsAbsolute, ownsGiven, ...written };
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    removeNameDirIfEmpty(run, name);
    throw writeFailed(dir, error);
  }
}

/**
 * Removes a staged folder that is not committed (refused, or the lock never came), and its name's folder
 * when that leaves it empty: a refused dispatch leaves nothing behind.
 */
export function discardStaged(run: RunPaths, staged: Pick<Staged, "staging" | "name">): void {
  fs.rmSync(staged.staging, { recursive: true, force: true });
  removeNameDirIfEmpty(run, staged.name);
}

/** queued.json for a dispatch `blocked` at admission (with --queue, or a chain's next attempt); else null. */
export function queuedFile(blocked: Blocked | null, notBefore: string | null, at: Date): QueuedFile | null {
  if (blocked === null) return null;
  return { schema: SCHEMA_VERSION, since: at.toISOString(), ...blocked, blocker: blocked.blocker, notBefore };
}

/**
 * Writes admit.json and renames the staged folder into place — it appears whole or not at all: a
 * dispatcher killed halfway leaves only a hidden staging folder — then writes `latest` and the live marker.
 * Under the run's admission lock, held by the caller.
 */
export function commitDispatch(
  run: RunPaths,
  staged: Staged,
  { queued, account }: { queued: QueuedFile | null; account: AccountFile | null },
  at: Date,
): Committed {
  const { dispatchId, name, dir } = staged;
  let renamed = false;
  try {
    // queued.json before admit.json: a folder is never seen admitted to start at once and then queued.
    if (queued !== null) {
      const { schema: _schema, ...body } = queued;
      writeFolderJson(staged.staging, FILES.queued, body);
    }
    if (account !== null) {
      const { schema: _schema, ...body } = account;
      writeFolderJson(staged.staging, FILES.account, body);
    }
    // admit.json last, stamped now: a dispatch is admitted when the decision is made, not when it waited
    // for the lock.
    const admitFile: AdmitFile = { ...staged.admit, admittedAt: at.toISOString() };
    writeFolderJson(staged.staging, FILES.admit, admitFile);
    fs.renameSync(staged.staging, dir);
    renamed = true;
    writeFileAtomic(latestFile(run, name), `${dispatchId}\n`);
    writeLiveMarker(run, {
      dispatchId,
      name,
      dir,
      owns: staged.ownsAbsolute,
      backend: staged.admit.backend,
      ...(staged.admit.placement === undefined ? {} : { engine: staged.admit.placement.engine }),
      ...(staged.admit.placement?.target === undefined ? {} : { host: staged.admit.placement.target }),
      ...(staged.admit.accounts === undefined ? {} : { accounts: staged.admit.accounts }),
      ...(staged.admit.tags === undefined ? {} : { tags: staged.admit.tags }),
      ...(account === null ? {} : { account: account.name }),
      ...(queued === null
        ? {}
        : {
            queued: {
              since: queued.since,
              notBefore: queued.notBefore,
              blockedBy: queued.blockedBy,
              ...(queued.blockedBy === "window" || queued.blockedBy === "period-budget"
                ? { until: queued.blocker?.until ?? null }
                : {}),
            },
          }),
    });
    return { run, name, dispatchId, dir, admit: admitFile, spec: staged.spec, queued };
  } catch (error) {
    // Nothing was started yet: no trace of a dispatch that failed to be written.
    if (renamed) fs.rmSync(dir, { recursive: true, force: true });
    throw writeFailed(dir, error);
  }
}

/** An `--owns` path made absolute in `cwd`, as named (no link followed); a trailing `/` kept. */
function absoluteOwn(cwd: string, own: string): string {
  const absolute = path.resolve(cwd, own);
  return own.endsWith("/") && absolute !== "/" ? `${absolute}/` : absolute;
}

function writeFailed(dir: string, error: unknown): CatherdError {
  const message = error instanceof Error ? error.message : String(error);
  return new CatherdError("E_IO_WRITE", `cannot write the dispatch folder ${dir}: ${message}`, {
    fix: "free disk space (or fix the permissions of CATHERD_HOME), then dispatch again",
    cause: error,
  });
}

/** A dispatch's folder while it is staged: its id and name, its hidden name and where it goes. */
interface Folder {
  dispatchId: string;
  name: string;
  staging: string;
  dir: string;
}

/**
 * brief.md and spec.json into the staging folder; returns the admit.json to write last and the spec
 * written. Paths name the final folder. spec.json holds the spec resolved (every default applied), so
 * that it says what will run.
 */
function writeFolder(
  request: DispatchRequest,
  folder: Folder,
  placed: Placed,
  at: Date,
): { admit: AdmitFile; spec: Spec } {
  const answerSchemaPath = writeBriefAndSchema(request, folder);
  const spec = resolveSpec(specOf(request, folder, placed, answerSchemaPath), request.backend, folder.dir);
  writeFolderJson(folder.staging, FILES.spec, spec);
  return { admit: admitOf(request, folder, placed, at), spec };
}

/** brief.md, composed for the request's CLI, and answer-schema.json; the schema's path. */
function writeBriefAndSchema(request: DispatchRequest, folder: Folder): string | null {
  const answer = request.answer ?? null;
  const composed = composeBrief(request);
  if (composed !== null) writeBrief(folder.staging, composed);
  if (answer === null) return null;
  writeFileAtomic(path.join(folder.staging, FILES.answerSchema), answer.text);
  return path.join(folder.dir, FILES.answerSchema);
}

/** What the request says of spec.json, in its order; resolveSpec fills in the rest. */
function specOf(
  request: DispatchRequest,
  folder: Folder,
  placed: Placed,
  answerSchemaPath: string | null,
): SpecFile {
  const answer = request.answer ?? null;
  const plan = request.backend.plan({
    ...agent.toPlan(request),
    briefPath: request.brief === null ? null : path.join(folder.dir, FILES.brief),
    ...spendCaps.toPlan(request),
    answerSchema:
      answerSchemaPath === null || answer === null ? null : { path: answerSchemaPath, text: answer.text },
    ...steering.toPlan(request),
    sandboxed: request.sandboxPolicy != null,
  });
  return {
    schema: SCHEMA_VERSION,
    dispatchId: folder.dispatchId,
    backend: request.backend.id,
    cmd: plan.cmd,
    args: plan.args,
    env: { ...plan.env, ...request.env },
    cwd: placed.cwd,
    stdinPath: plan.stdin === "brief" && request.brief !== null ? FILES.brief : null,
    stallMs: undefined,
    ...limits.toSpec(request),
    worktree: placed.worktree,
    ...isolation.toSpec(request),
    ...spendCaps.toSpec(request),
    ...brief.toSpec(request),
    ...(answerSchemaPath === null ? {} : { answerSchema: answerSchemaPath }),
    ...steering.toSpec(request),
    ...checking.toSpec(request),
    ...(request.sandboxPolicy == null ? {} : { sandbox: request.sandboxPolicy }),
  };
}

/** admit.json as it will be written at the commit (`admittedAt` is stamped then). */
function admitOf(request: DispatchRequest, folder: Folder, placed: Placed, at: Date): AdmitFile {
  const { owns, access, effort, ...core } = agent.toAdmit(request);
  const admit: AdmitFile = {
    schema: SCHEMA_VERSION,
    dispatchId: folder.dispatchId,
    ...core,
    name: folder.name,
    cwd: placed.cwd,
    owns,
    resolved: {
      cwd: resolvedPath(placed.cwd),
      owns: owns.map((p) => resolvedPath(absoluteOwn(placed.cwd, p))),
    },
    admittedAt: at.toISOString(),
    dispatcher: { pid: process.pid, startTime: startTimeOf(process.pid), host: hostIdentity() },
    git: placed.git,
    ...chainAdmit(request.chain),
    ...(request.chain === null ? {} : { ladder: ladderOf(request, request.chain) }),
    ...notify.toAdmit(request),
    ...placement.toAdmit(request),
    ...accountChoice.toAdmit(request),
    ...tagging.toAdmit(request),
    ...racing.toAdmit(request),
    access,
    effort,
    ...followUpOf(request),
  };
  return admit;
}

/** The turn this one continues, for a follow-up. */
function followUpOf(request: DispatchRequest): Pick<AdmitFile, "followUpOf"> {
  const continued = request.followUp?.dispatchId;
  return continued === undefined ? {} : { followUpOf: continued };
}

/**
 * admit.json's `ladder`: the chain's future, and what its next attempts repeat of this request (each
 * concern's `toLadder`; the chain's `--thread` as it was first given).
 */
function ladderOf(request: DispatchRequest, chain: ChainRequest): LadderFile {
  return {
    ...chainLadder(chain),
    rung: rungOf(request),
    request: {
      ...agent.toLadder(request),
      thread: chain.thread,
      ...limits.toLadder(request),
      ...isolation.toLadder(request),
      ...brief.toLadder(request),
    },
  };
}

/**
 * Picks a fresh id and creates its hidden staging folder `<name>/.<id>.admitting` exclusively (readers skip
 * it: not a valid id); a colliding id (same second, same suffix) draws again.
 */
function createFolder(request: DispatchRequest, run: RunPaths, at: Date): Folder {
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
      // EEXIST: the id is taken; ENOENT: a refused dispatch of the same name removed the empty name folder
      // between our makeDir and our mkdir. Either way: again.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EEXIST" && code !== "ENOENT") throw error;
    }
  }
  throw new CatherdError("E_IO_WRITE", `could not create a unique dispatch folder under ${run.dispatches}`);
}

/**
 * A name's folder made for a dispatch that was then refused is removed when nothing else is in it. rmdir
 * removes only an empty folder: a dispatcher staging into it at the same time has either put its staging
 * folder in it first, or finds it gone and makes it again (createFolder).
 */
function removeNameDirIfEmpty(run: RunPaths, name: string): void {
  try {
    fs.rmdirSync(nameDir(run, name));
  } catch {
    // not empty (another dispatch of the name), or gone
  }
}
