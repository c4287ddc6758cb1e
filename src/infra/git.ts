import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { GitSnapshot } from "../domain/schemas.js";

// Git is a hook into the outside: every call has a timeout and a safe fallback (null = unknown).

const GIT_TIMEOUT_MS = 5000;
const MAX_BUFFER = 64 * 1024 * 1024;

function git(cwd: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      "git",
      args,
      {
        cwd,
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: MAX_BUFFER,
        encoding: "utf8",
        // Never take the index lock: the agent may be running git in the same tree.
        env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" },
      },
      (error, stdout) => resolve(error === null ? stdout : null),
    );
  });
}

/** The state of the work tree around `cwd`: changed paths with size and mtime. Null when not a git tree. */
export async function gitSnapshot(cwd: string): Promise<GitSnapshot | null> {
  const root = (await git(cwd, ["rev-parse", "--show-toplevel"]))?.trim();
  if (root === undefined || root === "") return null;
  const [status, head] = await Promise.all([
    git(root, ["status", "--porcelain=v1", "-z", "--untracked-files=all"]),
    git(root, ["rev-parse", "--verify", "-q", "HEAD"]),
  ]);
  if (status === null) return null;
  const entries: GitSnapshot["entries"] = {};
  const fields = status.split("\0");
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? "";
    if (field.length < 4) continue;
    const code = field.slice(0, 2);
    const file = field.slice(3);
    if (code.includes("R") || code.includes("C")) i += 1; // the next field is the rename's source
    let size: number | null = null;
    let mtimeMs: number | null = null;
    try {
      const stat = fs.lstatSync(path.join(root, file));
      size = stat.size;
      mtimeMs = stat.mtimeMs;
    } catch {
      // deleted
    }
    entries[file] = { status: code, size, mtimeMs };
  }
  return { root, head: head?.trim() || null, entries };
}

/** Paths changed between two snapshots: dirty-state differences plus files of commits made in between. */
export async function changedBetween(before: GitSnapshot, after: GitSnapshot): Promise<string[] | null> {
  const changed = new Set<string>();
  const keys = new Set([...Object.keys(before.entries), ...Object.keys(after.entries)]);
  for (const key of keys) {
    const a = before.entries[key];
    const b = after.entries[key];
    if (
      a === undefined ||
      b === undefined ||
      a.status !== b.status ||
      a.size !== b.size ||
      a.mtimeMs !== b.mtimeMs
    ) {
      changed.add(key);
    }
  }
  if (before.head !== after.head) {
    if (before.head === null || after.head === null) return null;
    const diff = await git(after.root, ["diff", "--name-only", "-z", before.head, after.head]);
    if (diff === null) return null;
    for (const file of diff.split("\0")) if (file !== "") changed.add(file);
  }
  return [...changed].sort();
}
