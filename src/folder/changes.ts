import * as fs from "node:fs";
import * as path from "node:path";
import type { AdmitFile, RecordFile, SpecFile } from "../domain/schemas.js";
import { bytesUnder } from "../infra/disk-usage.js";
import { gitLine } from "../infra/git-command.js";
import { commitsBetween } from "../infra/git-commits.js";
import { changedPaths, snapshotWorkTree, treeOfCommit, writePatch } from "../infra/git-tree.js";
import { FILES, fileIn } from "./layout.js";

// What a dispatch changed, worked out once at the end from two git trees: the admission-time tree (in
// admit.json) and the working tree now. The same two trees give `changedFiles` and `changes.patch`.

export type Changes = Pick<RecordFile, "changedFiles" | "patch" | "worktree" | "commits">;

const UNKNOWN: Changes = { changedFiles: null, patch: null, worktree: null, commits: null };

/**
 * The changes of the dispatch in `dir`: changed paths (relative to the repository's top), the patch
 * written to `changes.patch` (restricted to the dispatch's --owns), its worktree as it is now, and the
 * commits made since admission. Every part is null when git cannot tell: never a fake "no changes".
 */
export async function dispatchChanges(
  dir: string,
  admit: AdmitFile | null,
  spec: SpecFile | null,
): Promise<Changes> {
  const plan = spec?.worktree ?? null;
  const worktree = plan === null ? null : await worktreeNow(plan);
  const cwd = admit?.cwd ?? (spec === null ? null : path.resolve(dir, spec.cwd ?? "."));
  const before = await admissionTree(admit, plan);
  if (cwd === null || before === null) return { ...UNKNOWN, worktree };
  const after = await snapshotWorkTree(cwd);
  if (!after.ok) return { ...UNKNOWN, worktree };
  const owns = ownsFromTop(before.prefix ?? after.prefix, admit?.owns ?? []);
  const [changedFiles, patch, commits] = await Promise.all([
    changedPaths(after.root, before.tree, after.tree),
    writePatch(after.root, { from: before.tree, to: after.tree }, owns, fileIn(dir, FILES.patch)),
    commitsSince(after.root, plan?.base ?? before.head, worktree?.head ?? after.head),
  ]);
  return {
    changedFiles,
    patch: patch.ok ? { path: fileIn(dir, FILES.patch), bytes: patch.bytes } : null,
    worktree,
    commits,
  };
}

/** The tree the dispatch started from: admit.json's snapshot, else its worktree's base commit. */
async function admissionTree(
  admit: AdmitFile | null,
  plan: NonNullable<SpecFile["worktree"]> | null,
): Promise<{ tree: string; head: string | null; prefix: string | undefined } | null> {
  const git = admit?.git ?? null;
  if (git !== null && git.tree !== undefined) return { tree: git.tree, head: git.head, prefix: git.prefix };
  if (plan === null) return null;
  const tree = await treeOfCommit(plan.repo, plan.base);
  return tree === null ? null : { tree, head: plan.base, prefix: undefined };
}

async function worktreeNow(plan: NonNullable<SpecFile["worktree"]>): Promise<Changes["worktree"]> {
  const exists = fs.existsSync(plan.path);
  const head = exists ? await gitLine(plan.path, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]) : null;
  return {
    path: plan.path,
    branch: plan.branch,
    base: plan.base,
    head: head === "" ? null : head,
    bytes: exists ? bytesUnder(plan.path) : 0,
  };
}

async function commitsSince(
  root: string,
  from: string | null,
  to: string | null,
): Promise<Changes["commits"]> {
  if (from === null || to === null) return null;
  if (from === to) return { count: 0, list: [] };
  const found = await commitsBetween(root, from, to);
  return found === null ? null : { count: found.count, list: found.commits };
}

/**
 * --owns paths (relative to the dispatch's folder, which sits at `prefix` in the repository) as paths
 * from the repository's top; a trailing `/` stays a folder. An own that names the top itself restricts
 * nothing: the whole tree (no paths).
 */
export function ownsFromTop(prefix: string | undefined, owns: readonly string[]): string[] {
  const fromTop = owns.map((own) => {
    const folder = own.endsWith("/") || own === "." || own.endsWith("/.");
    const joined = path.posix.normalize(`${prefix ?? ""}${own}`).replace(/\/$/, "");
    if (joined === ".") return "";
    return folder ? `${joined}/` : joined;
  });
  return fromTop.includes("") ? [] : fromTop;
}
