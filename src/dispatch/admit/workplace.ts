import * as path from "node:path";
import { CatherdError } from "../../domain/errors.js";
import type { AdmitFile, WorktreePlan } from "../../domain/schemas.js";
import { gitLine } from "../../infra/git-command.js";
import { snapshotWorkTree, treeOfCommit } from "../../infra/git-tree.js";
import { locateRepo } from "../../infra/git-worktree.js";
import { type RunPaths, worktreeDir } from "../../infra/paths.js";
import type { DispatchRequest } from "../request/dispatch-request.js";

// Where the agent will work, settled before anything is written: in --cwd as it is (with a git snapshot
// of its work tree, when it has one), or in a new worktree of --cwd's repository (created by the
// supervisor before the agent starts; here only checked and named).

export type Workplace =
  | { kind: "checkout"; git: AdmitFile["git"] }
  | { kind: "worktree"; repo: string; prefix: string; base: string; baseTree: string }
  | { kind: "continued"; git: AdmitFile["git"]; worktree: WorktreePlan };

/**
 * The workplace of a request. For --worktree: E_INPUT_INVALID when --cwd is not in a git work tree or
 * --base names no commit. Otherwise the admission snapshot of --cwd's work tree, or null outside one.
 */
export async function planWorkplace(request: DispatchRequest): Promise<Workplace> {
  const wanted = request.isolation.worktree;
  if (wanted === null) {
    const taken = await snapshotWorkTree(request.cwd);
    const git = taken.ok
      ? { root: taken.root, prefix: taken.prefix, head: taken.head, tree: taken.tree }
      : null;
    // A follow-up works in its conversation's worktree itself: its snapshot is the worktree as the
    // previous turn left it, so that its patch holds its own turn's changes.
    const continued = request.followUp?.worktree ?? null;
    if (continued !== null) return { kind: "continued", git, worktree: continued };
    return { kind: "checkout", git };
  }
  const repo = await locateRepo(request.cwd);
  if (repo === null) {
    throw new CatherdError("E_INPUT_INVALID", `--worktree: ${request.cwd} is not inside a git repository`, {
      fix: "give a --cwd inside a git work tree (git init, or clone one), or dispatch without --worktree",
    });
  }
  const base = await gitLine(repo.root, ["rev-parse", "--verify", "-q", `${wanted.base}^{commit}`]);
  const baseTree = base === null || base === "" ? null : await treeOfCommit(repo.root, base);
  if (base === null || base === "" || baseTree === null) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `--base ${wanted.base} does not name a commit in ${repo.root}`,
      {
        fix: "give a branch, tag or commit of that repository (it needs at least one commit)",
      },
    );
  }
  return { kind: "worktree", repo: repo.root, prefix: repo.prefix, base, baseTree };
}

/** Where a dispatch's agent works, once its id is known: its folder, admission's git tree, its worktree. */
export interface Placed {
  cwd: string;
  git: AdmitFile["git"];
  worktree: WorktreePlan | null;
}

/**
 * The place of the dispatch `folder` names: in a worktree, the agent's folder is the same folder inside
 * `<run>/worktrees/<dispatchId>` as --cwd in the repository, on branch `catherd/<name>-<suffix>`, and
 * admission's tree is the base commit's (a fresh checkout of it).
 */
export function placeDispatch(
  workplace: Workplace,
  request: DispatchRequest,
  run: RunPaths,
  { name, dispatchId }: { name: string; dispatchId: string },
): Placed {
  if (workplace.kind === "checkout") return { cwd: request.cwd, git: workplace.git, worktree: null };
  if (workplace.kind === "continued")
    return { cwd: request.cwd, git: workplace.git, worktree: workplace.worktree };
  const worktreePath = worktreeDir(run, dispatchId);
  return {
    cwd: path.resolve(worktreePath, workplace.prefix),
    git: { root: worktreePath, prefix: workplace.prefix, head: workplace.base, tree: workplace.baseTree },
    worktree: {
      repo: workplace.repo,
      path: worktreePath,
      branch: worktreeBranch(name, dispatchId),
      base: workplace.base,
    },
  };
}

/** `catherd/<name>-<id suffix>`; an unnamed dispatch's name ends with that suffix already. */
export function worktreeBranch(name: string, dispatchId: string): string {
  const suffix = dispatchId.slice(-6);
  return name.endsWith(`-${suffix}`) ? `catherd/${name}` : `catherd/${name}-${suffix}`;
}
