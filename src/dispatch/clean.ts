import * as fs from "node:fs";
import * as path from "node:path";
import { type CleanFacts, judgeForClean, type WorktreeFacts } from "../domain/clean-rule.js";
import { isValidId } from "../domain/ids.js";
import type { WorktreePlan } from "../domain/schemas.js";
import { agentDispatchId } from "../folder/dispatch-id-of.js";
import { FILES, fileIn, placeOf } from "../folder/layout.js";
import { removeRacesWithoutAttempts } from "../folder/race.js";
import { readFolderJson } from "../folder/read.js";
import { removeLeftoverCgroups } from "../infra/cgroup/cgroup-leftovers.js";
import { cgroupName } from "../infra/cgroup/dispatch-cgroup.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { bytesUnder, removeMeasured } from "../infra/disk-usage.js";
import { inspectWorktree, removeWorktree } from "../infra/git-worktree.js";
import { okValue } from "../infra/json-file.js";
import { latestFile, type RunPaths } from "../infra/paths.js";
import { underAdmissionLock } from "./admit/admission-lock.js";
import { listDispatchDirs } from "./read/locate.js";
import { readDispatch } from "./reader.js";

// `catherd clean`: removes recorded dispatch folders older than an age, with their worktrees, and never
// loses work — a live dispatch is never touched, a worktree holding uncommitted changes or commits no
// other branch contains is kept unless forced, and no branch is ever deleted.

export interface CleanOptions {
  olderThanMs: number;
  force: boolean;
  dryRun: boolean;
  clock?: Clock;
}

export interface CleanedDispatch {
  run: string;
  name: string;
  dispatchId: string;
  dir: string;
  /** Bytes of the folder and its worktree, freed (or that would be, with --dry-run). */
  bytes: number;
  /** Its worktree, removed (its branch kept); null when it had none. */
  worktree: { path: string; branch: string } | null;
}

export interface KeptDispatch {
  run: string;
  name: string;
  dispatchId: string;
  dir: string;
  why: string;
  worktree: { path: string; branch: string } | null;
}

export interface CleanReport {
  dryRun: boolean;
  olderThanMs: number;
  removed: CleanedDispatch[];
  kept: KeptDispatch[];
  freedBytes: number;
  /** Empty cgroups of dispatches that are recorded or gone, removed (or that would be, with --dry-run). */
  cgroupsRemoved: string[];
}

/**
 * A leftover cgroup whose dispatch clean did not find recorded is removed once its dispatch is older than
 * this and the cgroup empty: a live dispatch's cgroup is empty only for moments, and another home's
 * dispatches share catherd's cgroup. The empty cgroup of a dispatch clean found recorded goes at once.
 */
export const LEFTOVER_CGROUP_AGE_MS = 3_600_000;

/** Cleans the given runs. */
export async function cleanRuns(runs: readonly RunPaths[], options: CleanOptions): Promise<CleanReport> {
  const clock = options.clock ?? systemClock;
  const now = clock.wallNow().getTime();
  const report: CleanReport = {
    dryRun: options.dryRun,
    olderThanMs: options.olderThanMs,
    removed: [],
    kept: [],
    freedBytes: 0,
    cgroupsRemoved: [],
  };
  const live = new Set<string>();
  const recorded = new Set<string>();
  for (const run of runs) {
    const dirs = listDispatchDirs(run);
    const worktreeHolders = newestWorktreeHolders(dirs);
    for (const dir of dirs) {
      // Named before the clean, which may remove the folder (only a recorded one's).
      const name = cgroupNameOf(dir);
      const outcome = await cleanDispatch(dir, { run, options, clock, now, worktreeHolders });
      if (name !== null) {
        const gone = outcome !== null && !("why" in outcome);
        (gone || fs.existsSync(fileIn(dir, FILES.record)) ? recorded : live).add(name);
      }
      if (outcome === null) continue;
      if ("why" in outcome) report.kept.push(outcome);
      else {
        report.removed.push(outcome);
        report.freedBytes += outcome.bytes;
      }
    }
    for (const leftover of leftoversOf(run, options, now)) {
      const bytes = options.dryRun ? bytesUnder(leftover.dir) : removeMeasured(leftover.dir);
      report.removed.push({ ...leftover, bytes, worktree: null });
      report.freedBytes += bytes;
    }
    if (!options.dryRun) await tidyRun(run);
  }
  report.cgroupsRemoved = removeLeftoverCgroups(now, LEFTOVER_CGROUP_AGE_MS, (name) => live.has(name), {
    dryRun: options.dryRun,
    ended: (name) => recorded.has(name),
  });
  return report;
}

/** The cgroup name of the dispatch in `dir`, null without a readable spec.json. */
function cgroupNameOf(dir: string): string | null {
  const spec = okValue(readFolderJson(dir, FILES.spec));
  return spec === null ? null : cgroupName(agentDispatchId({ dir, spec }), dir);
}

/** A staging folder older than this belongs to a dispatcher that died: admission gives up within 5 min. */
export const ABANDONED_STAGING_MS = 3_600_000;

/**
 * The hidden folders no reader lists: `.<id>.admitting` left by a dispatcher killed while it wrote (older
 * than the age, and than an hour whatever the age), and `.<id>.removing` left by a clean interrupted
 * while it deleted (condemned already).
 */
function leftoversOf(
  run: RunPaths,
  options: CleanOptions,
  now: number,
): { run: string; name: string; dispatchId: string; dir: string }[] {
  const found: { run: string; name: string; dispatchId: string; dir: string }[] = [];
  for (const name of readdir(run.dispatches)) {
    if (!isValidId(name)) continue;
    for (const entry of readdir(path.join(run.dispatches, name))) {
      const hidden = /^\.(.+)\.(admitting|removing)$/.exec(entry);
      const dispatchId = hidden?.[1];
      if (hidden === null || dispatchId === undefined || !isValidId(dispatchId)) continue;
      const dir = path.join(run.dispatches, name, entry);
      const stat = fs.lstatSync(dir, { throwIfNoEntry: false });
      if (stat === undefined || !stat.isDirectory()) continue;
      const ageMs = now - stat.mtimeMs;
      if (hidden[2] === "admitting" && ageMs < Math.max(options.olderThanMs, ABANDONED_STAGING_MS)) continue;
      found.push({ run: run.run, name, dispatchId, dir });
    }
  }
  return found;
}

/**
 * Each worktree's newest dispatch: a conversation's follow-ups work in its first turn's worktree
 * (specs/dispatch.md, "Following up"), which goes only with its newest turn — an earlier turn's folder is
 * removed without it, and a live follow-up, never cleaned, keeps it. Newest by admit.json's `admittedAt`
 * (to the millisecond; a follow-up is admitted only once the turn before is recorded), not by id: ids
 * name the second, and two turns of one second sort by their random suffixes.
 */
function newestWorktreeHolders(dirs: readonly string[]): Map<string, string> {
  const holders = new Map<string, { dir: string; admittedAt: number }>();
  for (const dir of dirs) {
    const plan = okValue(readFolderJson(dir, FILES.spec))?.worktree ?? null;
    if (plan === null) continue;
    const admitted = Date.parse(okValue(readFolderJson(dir, FILES.admit))?.admittedAt ?? "");
    const admittedAt = Number.isFinite(admitted) ? admitted : Number.NEGATIVE_INFINITY;
    const held = holders.get(plan.path);
    // dirs come newest id first: an equal admission time keeps the id order.
    if (held === undefined || admittedAt > held.admittedAt) holders.set(plan.path, { dir, admittedAt });
  }
  return new Map([...holders].map(([worktree, held]) => [worktree, held.dir]));
}

/** One run's clean under way: its paths, the options, the clock and its reading, each worktree's holder. */
interface CleanPass {
  run: RunPaths;
  options: CleanOptions;
  clock: Clock;
  now: number;
  /** Each worktree's newest dispatch (newestWorktreeHolders): the one that takes it along. */
  worktreeHolders: ReadonlyMap<string, string>;
}

/** One dispatch folder judged and, when condemned, removed; null when it is younger than the age. */
async function cleanDispatch(dir: string, pass: CleanPass): Promise<CleanedDispatch | KeptDispatch | null> {
  const { options, clock, now } = pass;
  // A dead dispatch nobody recorded yet is recorded first (as any reader would), then judged as recorded.
  if (!options.dryRun && !fs.existsSync(fileIn(dir, FILES.record))) {
    await readDispatch(dir, { clock, promote: false });
  }
  const { facts, plan } = await cleanFactsOf(dir, pass);
  const verdict = judgeForClean(facts, { now, olderThanMs: options.olderThanMs, force: options.force });
  if (verdict.action === "young") return null;
  const who = {
    run: pass.run.run,
    name: placeOf(dir)?.name ?? path.basename(path.dirname(dir)),
    dispatchId: path.basename(dir),
    dir,
    worktree: plan === null ? null : { path: plan.path, branch: plan.branch },
  };
  if (verdict.action === "keep") return { ...who, why: verdict.why };
  const worktree =
    plan === null || verdict.worktree === "none" ? null : { plan, force: verdict.worktree === "force" };
  const worktreeBytes = worktree === null ? 0 : bytesUnder(worktree.plan.path);
  if (options.dryRun) return { ...who, bytes: bytesUnder(dir) + worktreeBytes };
  const kept = worktree === null ? null : await removeWorktreeOf(worktree.plan, worktree.force);
  if (kept !== null) return { ...who, why: kept };
  return { ...who, bytes: removeFolder(dir) + worktreeBytes };
}

/**
 * What clean judges a folder by (domain/clean-rule.ts), read from its files, and the worktree it would take
 * along: none when a later turn of its conversation works in it.
 */
async function cleanFactsOf(
  dir: string,
  { run, worktreeHolders }: CleanPass,
): Promise<{ facts: CleanFacts; plan: WorktreePlan | null }> {
  const recordRead = readFolderJson(dir, FILES.record);
  const admitRead = readFolderJson(dir, FILES.admit);
  const record = okValue(recordRead);
  const admit = okValue(admitRead);
  const named = okValue(readFolderJson(dir, FILES.spec))?.worktree ?? null;
  // A worktree a later turn of the conversation works in is that turn's to take with it.
  const plan = named !== null && (worktreeHolders.get(named.path) ?? dir) !== dir ? null : named;
  const at = Date.parse(record?.endedAt ?? admit?.admittedAt ?? "");
  const unreadable = [
    { file: FILES.record, read: recordRead },
    { file: FILES.admit, read: admitRead },
  ].flatMap(({ file, read }) => (read.kind === "invalid" ? [{ file, code: read.error.code }] : []));
  const facts: CleanFacts = {
    recorded: record !== null,
    at: Number.isFinite(at) ? at : null,
    worktree: plan === null ? null : await worktreeFacts(run, plan),
    unreadable,
  };
  return { facts, plan };
}

async function worktreeFacts(run: RunPaths, plan: WorktreePlan): Promise<WorktreeFacts> {
  const state = await inspectWorktree(plan.repo, plan);
  return {
    // Only a worktree where catherd puts them: a hand-edited spec must not point clean at a user's folder.
    insideRun: path.dirname(plan.path) === run.worktrees && isValidId(path.basename(plan.path)),
    exists: state.exists,
    dirty: state.dirty,
    unmerged: state.unmerged === null ? null : state.unmerged.length,
    branch: plan.branch,
  };
}

/** Removes a dispatch's worktree, never its branch; null when done, else why it stays. */
async function removeWorktreeOf(plan: WorktreePlan, force: boolean): Promise<string | null> {
  const exists = fs.existsSync(plan.path);
  const removed = await removeWorktree(plan.repo, plan.path, force);
  if (removed.ok || !exists) return null;
  // Forced, and the repository itself is gone: git cannot remove it, and there is nothing left to lose
  // but the files themselves, which --force gives up.
  if (force && !fs.existsSync(plan.repo)) {
    removeMeasured(plan.path);
    return null;
  }
  return `git would not remove its worktree: ${removed.reason}`;
}

/**
 * Removes a dispatch folder: first renamed to a hidden name (readers skip it) so that it disappears whole,
 * then deleted. Returns the bytes it held.
 */
function removeFolder(dir: string): number {
  const hidden = path.join(path.dirname(dir), `.${path.basename(dir)}.removing`);
  try {
    fs.renameSync(dir, hidden);
  } catch {
    return removeMeasured(dir);
  }
  return removeMeasured(hidden);
}

/**
 * After removals: a name's `latest` naming a removed folder goes (readers then take the newest folder of
 * the name), and under the run's admission lock — admission creates name folders — empty name folders, an
 * empty worktrees folder and the races none of whose attempts remain go too. Best effort: leftovers are a few empty folders, never a wrong removal.
 */
async function tidyRun(run: RunPaths): Promise<void> {
  await underAdmissionLock(run, async () => {
    for (const name of readdir(run.dispatches)) {
      if (!isValidId(name)) continue;
      const latest = latestFile(run, name);
      const id = readText(latest);
      if (id !== null && isValidId(id) && !fs.existsSync(path.join(run.dispatches, name, id)))
        fs.rmSync(latest, { force: true });
      removeIfEmpty(path.join(run.dispatches, name));
    }
    removeIfEmpty(run.worktrees);
    removeRacesWithoutAttempts(run);
  }).catch(() => {
    // No lock, or a folder that changed meanwhile: it stays for the next clean.
  });
}

function removeIfEmpty(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // not empty, or gone
  }
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    return null;
  }
}

function readdir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
