import { runGit } from "./git-command.js";

// Questions about history, asked of the repository's shared object store and refs.

export interface Commit {
  sha: string;
  subject: string;
}

/** At most this many commits are listed; a count says how many there were in all. */
export const COMMIT_LIST_LIMIT = 100;

/**
 * The commits reachable from `head` but not from `base`, oldest first (the newest `limit` of them), with
 * their total count. Null when git cannot tell (an object pruned, git missing).
 */
export async function commitsBetween(
  root: string,
  base: string,
  head: string,
  limit = COMMIT_LIST_LIMIT,
): Promise<{ count: number; commits: Commit[] } | null> {
  const range = `${base}..${head}`;
  const [count, log] = await Promise.all([
    runGit(root, ["rev-list", "--count", range]),
    runGit(root, ["log", "--no-color", "--format=%H %s", `-n${limit}`, range]),
  ]);
  if (!count.ok || !log.ok) return null;
  const commits = log.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const space = line.indexOf(" ");
      return space < 0
        ? { sha: line, subject: "" }
        : { sha: line.slice(0, space), subject: line.slice(space + 1) };
    })
    .reverse();
  return { count: Number.parseInt(count.stdout.trim(), 10), commits };
}

/**
 * The commits reachable from `heads` that no branch other than `ownBranch` contains, local or
 * remote-tracking (a pushed commit is not lost with the work tree). Null when git cannot tell.
 */
export async function commitsOnlyOn(
  root: string,
  heads: readonly string[],
  ownBranch: string,
): Promise<string[] | null> {
  if (heads.length === 0) return [];
  // --exclude takes a glob: a branch name is matched as written.
  const exact = ownBranch.replace(/[*?[\\]/g, "\\$&");
  const listed = await runGit(root, [
    "rev-list",
    ...heads,
    "--not",
    `--exclude=${exact}`,
    "--branches",
    "--remotes",
  ]);
  if (!listed.ok) return null;
  return listed.stdout.split("\n").filter((line) => line !== "");
}
