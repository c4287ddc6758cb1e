import * as fs from "node:fs";
import { gitLine, runGit, whyFailed } from "./git-command.js";
import { commitsOnlyOn } from "./git-commits.js";

// Git worktrees for dispatches: created on a new branch, inspected before clean-up, removed without ever
// deleting a branch (its commits stay reachable whatever happens to the folder).

/** Checking out a big tree takes longer than a plain query. */
export const WORKTREE_ADD_TIMEOUT_MS = 120_000;

/** The repository that contains a folder, and the folder's path inside it ("" at the top, else "a/b/"). */
export interface RepoLocation {
  root: string;
  prefix: string;
}

/** Where `cwd` sits in its git work tree; null when it is not inside one (or git cannot tell). */
export async function locateRepo(cwd: string): Promise<RepoLocation | null> {
  const found = await runGit(cwd, ["rev-parse", "--show-toplevel", "--show-prefix"]);
  if (!found.ok) return null;
  const [root, prefix] = found.stdout.split("\n");
  if (root === undefined || root === "") return null;
  return { root, prefix: prefix ?? "" };
}

export interface Worktree {
  path: string;
  branch: string;
  /** The commit the branch starts from. */
  base: string;
}

export type WorktreeAdded = { ok: true; worktree: Worktree } | { ok: false; reason: string };

/**
 * Creates a worktree of the repository at `root` in `path` on a new branch `branch` starting at the commit
 * `base` names. Refuses an invalid branch name, a base that is not a commit, an existing branch or path.
 */
export async function addWorktree(
  root: string,
  request: { path: string; branch: string; base: string },
  timeoutMs = WORKTREE_ADD_TIMEOUT_MS,
): Promise<WorktreeAdded> {
  const valid = await runGit(root, ["check-ref-format", "--branch", request.branch]);
  if (!valid.ok) return { ok: false, reason: `${request.branch} is not a valid branch name` };
  const base = await gitLine(root, ["rev-parse", "--verify", "-q", `${request.base}^{commit}`]);
  if (base === null || base === "") return { ok: false, reason: `${request.base} does not name a commit` };
  for (let attempt = 1; ; attempt++) {
    // A branch an earlier attempt made before it failed is checked out as it is (it starts at `base`).
    // Only on a retry: a branch there before the first attempt is refused, as git refuses it.
    const made =
      attempt === 1
        ? null
        : await gitLine(root, ["rev-parse", "--verify", "-q", `refs/heads/${request.branch}^{commit}`]);
    const args =
      made === base
        ? ["worktree", "add", "--quiet", request.path, request.branch]
        : ["worktree", "add", "--quiet", "--no-track", "-b", request.branch, request.path, base];
    const added = await runGit(root, args, { timeoutMs });
    if (added.ok) return { ok: true, worktree: { path: request.path, branch: request.branch, base } };
    const reason = whyFailed(added);
    if (attempt >= RACE_ATTEMPTS || !RACING_WORKTREE.test(reason)) return { ok: false, reason };
    // Another worktree of the repository was being added at the same moment (50 `--worktree` dispatches
    // at once do it): git read its half-made folder. Again, a moment later.
    removeIfEmpty(request.path);
    await new Promise((resolve) => setTimeout(resolve, RACE_BACKOFF_MS * attempt));
  }
}

/**
 * What `git worktree add` says when it lists the repository's worktrees while another is being added
 * (git 2.39: "fatal: failed to read .git/worktrees/<id>/commondir: Success"): transient.
 */
const RACING_WORKTREE = /failed to read \S*worktrees\/[^/\s]+\/(commondir|gitdir|HEAD)/;
const RACE_ATTEMPTS = 5;
const RACE_BACKOFF_MS = 100;

function removeIfEmpty(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // not there, or not empty: git refuses the next attempt with its own words
  }
}

/** What clean-up must know about a worktree before it removes it; null fields are unknown (keep it). */
export interface WorktreeState {
  exists: boolean;
  head: string | null;
  /** Modified, deleted or untracked (not ignored) files. */
  dirty: boolean | null;
  /** Commits on its HEAD or its branch that no other branch contains. */
  unmerged: string[] | null;
}

export async function inspectWorktree(
  root: string,
  worktree: { path: string; branch: string },
): Promise<WorktreeState> {
  const exists = fs.existsSync(worktree.path);
  const [head, status, branchTip] = await Promise.all([
    exists ? gitLine(worktree.path, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]) : null,
    exists ? runGit(worktree.path, ["status", "--porcelain=v1", "-z", "--untracked-files=normal"]) : null,
    gitLine(root, ["rev-parse", "--verify", "-q", `refs/heads/${worktree.branch}^{commit}`]),
  ]);
  const dirty = status === null ? false : status.ok ? status.stdout !== "" : null;
  const heads = [head, branchTip].filter((sha): sha is string => sha !== null && sha !== "");
  // A work tree that exists but whose HEAD cannot be read may hide commits: unknown, not clean.
  const unmerged = exists && head === null ? null : await commitsOnlyOn(root, heads, worktree.branch);
  return { exists, head, dirty, unmerged };
}

export type WorktreeRemoved = { ok: true } | { ok: false; reason: string };

/**
 * Removes the worktree at `path` (its folder and git's note of it); its branch stays. Without `force` git
 * itself refuses a work tree with modified or untracked files, a second guard behind `inspectWorktree`.
 */
export async function removeWorktree(root: string, path: string, force: boolean): Promise<WorktreeRemoved> {
  const removed = await runGit(root, ["worktree", "remove", ...(force ? ["--force"] : []), path], {
    timeoutMs: WORKTREE_ADD_TIMEOUT_MS,
  });
  return removed.ok ? { ok: true } : { ok: false, reason: whyFailed(removed) };
}
