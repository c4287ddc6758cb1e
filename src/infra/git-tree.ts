import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { FILE_MODE } from "./atomic.js";
import { gitLine, runGit, whyFailed } from "./git-command.js";

// The state of a working tree as a git tree object, and what changed between two of them. A snapshot is
// written from a private index, so the user's index, stash and refs are never touched; the only trace it
// leaves in the repository is unreferenced objects, which git's own gc prunes.

/** `git add -A` hashes every new or changed file: a big tree needs longer than a plain query. */
export const SNAPSHOT_TIMEOUT_MS = 30_000;
/** Writing a patch reads every changed blob. */
export const PATCH_TIMEOUT_MS = 60_000;

/**
 * A working tree at one moment: its top folder, where the folder asked about sits in it ("" at the top,
 * else "a/b/"), HEAD's commit (null on an unborn branch), and the tree.
 */
export interface TreeSnapshot {
  root: string;
  prefix: string;
  head: string | null;
  tree: string;
}

export type Snapshot = ({ ok: true } & TreeSnapshot) | { ok: false; reason: string };

/**
 * The working tree that contains `cwd`, as a tree object: tracked files as they are on disk (deletions
 * included), untracked files that .gitignore does not exclude, no ignored file. Content is as git stores
 * it (clean filters applied).
 */
export async function snapshotWorkTree(cwd: string, timeoutMs = SNAPSHOT_TIMEOUT_MS): Promise<Snapshot> {
  if (!mayBeInRepository(cwd)) {
    return { ok: false, reason: `${cwd} is not in a git repository (no .git or HEAD in it or above it)` };
  }
  const located = await runGit(cwd, ["rev-parse", "--show-toplevel", "--show-prefix", "--git-path", "index"]);
  if (!located.ok) return { ok: false, reason: whyFailed(located) };
  // The index path is relative to `cwd` when git found the repository by walking up from it.
  const [root, prefix, indexPath] = located.stdout.split("\n");
  if (
    root === undefined ||
    root === "" ||
    prefix === undefined ||
    indexPath === undefined ||
    indexPath === ""
  ) {
    return { ok: false, reason: `${cwd} is not inside a git work tree` };
  }
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "catherd-index-"));
  try {
    const env = { GIT_INDEX_FILE: path.join(scratch, "index") };
    // Start from a copy of the user's index: its stat data spares re-hashing unchanged files, and its
    // skip-worktree bits keep a sparse checkout's absent files from reading as deleted. Without one, from
    // HEAD's tree (then the add, which needs it, waits for HEAD).
    const seeded = copyIfPresent(path.resolve(cwd, indexPath), env.GIT_INDEX_FILE);
    const heading = gitLine(root, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]);
    if (!seeded) {
      const head = await heading;
      const read = head === null ? null : await runGit(root, ["read-tree", head], { env });
      if (read !== null && !read.ok) return { ok: false, reason: whyFailed(read) };
    }
    // A split index would write its shared part into the repository: keep the private index whole.
    const [added, head] = await Promise.all([
      runGit(root, ["-c", "core.splitIndex=false", "add", "-A"], { env, timeoutMs }),
      heading,
    ]);
    if (!added.ok) return { ok: false, reason: whyFailed(added) };
    const tree = await gitLine(root, ["write-tree"], { env });
    if (tree === null || tree === "") return { ok: false, reason: "git write-tree failed" };
    return { ok: true, root, prefix, head, tree };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Whether git could find a repository from `cwd`. False only when neither `cwd` nor any folder above it,
 * along the real path git walks, holds a `.git` (a repository's folder or a worktree's file) or a `HEAD`
 * (a bare repository): what git's discovery looks for at each level. The variables that could point git
 * elsewhere are removed from every call (git-command.ts), and the ones that stop the walk early only find
 * less. Spares dispatches outside a repository a git process: a fork of this node process and git's own
 * start, ~40 ms of the dispatcher's CPU (specs/performance.md, "What loading costs"). Where it says yes,
 * git has the last word.
 */
export function mayBeInRepository(cwd: string): boolean {
  let folder: string;
  try {
    folder = fs.realpathSync(cwd);
  } catch {
    return true;
  }
  for (;;) {
    if (fs.existsSync(path.join(folder, ".git")) || fs.existsSync(path.join(folder, "HEAD"))) return true;
    const parent = path.dirname(folder);
    if (parent === folder) return false;
    folder = parent;
  }
}

function copyIfPresent(from: string, to: string): boolean {
  try {
    fs.copyFileSync(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

/**
 * Pathspecs for owned paths relative to the repository's top: a trailing `/` is a folder and everything
 * under it; otherwise exactly that one file (as in `ownsOverlap`). Literal: `*` in a name is a character.
 * No owns: the whole tree.
 */
export function ownsPathspecs(owns: readonly string[]): string[] {
  if (owns.length === 0) return [];
  return owns.flatMap((own) =>
    own.endsWith("/") ? [`:(top,literal)${own}`] : [`:(top,literal)${own}`, `:(top,literal,exclude)${own}/`],
  );
}

/** Options that make a patch `git apply` can read whatever the user's diff configuration says. */
const PATCH_FORMAT = [
  "--binary",
  "--full-index",
  "-M",
  "--no-color",
  "--no-ext-diff",
  "--no-textconv",
  "--src-prefix=a/",
  "--dst-prefix=b/",
];

/** The tree of a commit; null when it names none. */
export function treeOfCommit(root: string, commit: string): Promise<string | null> {
  return gitLine(root, ["rev-parse", "--verify", "-q", `${commit}^{tree}`]);
}

export type PatchWritten = { ok: true; bytes: number } | { ok: false; reason: string };

/**
 * Writes the binary-safe patch from tree `from` to tree `to` (restricted to `owns`, root-relative) to
 * `target`, atomically and 0600: `git apply` of it on the `from` state gives the `to` state byte for byte.
 */
export async function writePatch(
  root: string,
  { from, to }: { from: string; to: string },
  owns: readonly string[],
  target: string,
): Promise<PatchWritten> {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.tmp`);
  try {
    const diff = await runGit(
      root,
      ["diff", ...PATCH_FORMAT, `--output=${temp}`, from, to, "--", ...ownsPathspecs(owns)],
      { timeoutMs: PATCH_TIMEOUT_MS },
    );
    if (!diff.ok) return { ok: false, reason: whyFailed(diff) };
    return { ok: true, bytes: settleFile(temp, target) };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** Makes `temp` 0600 and durable, then renames it to `target`; returns its size. */
function settleFile(temp: string, target: string): number {
  const fd = fs.openSync(temp, "r+");
  try {
    fs.fchmodSync(fd, FILE_MODE);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, target);
  return fs.statSync(target).size;
}

/**
 * The paths, relative to the repository's top and sorted, that differ between two trees (restricted to
 * `owns` when given). A rename lists both names. Null when git cannot tell.
 */
export async function changedPaths(
  root: string,
  from: string,
  to: string,
  owns: readonly string[] = [],
): Promise<string[] | null> {
  const diff = await runGit(
    root,
    ["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", from, to, "--", ...ownsPathspecs(owns)],
    { timeoutMs: PATCH_TIMEOUT_MS },
  );
  if (!diff.ok) return null;
  return diff.stdout
    .split("\0")
    .filter((file) => file !== "")
    .sort();
}
