import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

// Real git repositories in temp folders, independent of the machine's own git configuration.

const ISOLATED_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "Test Author",
  GIT_AUTHOR_EMAIL: "author@example.invalid",
  GIT_COMMITTER_NAME: "Test Author",
  GIT_COMMITTER_EMAIL: "author@example.invalid",
};

/** Makes every git process of this test file (catherd's own calls too) ignore the user's configuration. */
export function isolateGitConfig(): void {
  process.env.GIT_CONFIG_NOSYSTEM = "1";
  process.env.GIT_CONFIG_GLOBAL = "/dev/null";
}

/** Runs git in `cwd` and returns its stdout; throws on failure. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    env: ISOLATED_ENV,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** A new repository on branch `main` with `files` committed (none: an unborn branch). */
export function makeRepo(dir: string, files: Record<string, string | Uint8Array> = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  if (Object.keys(files).length > 0) {
    writeFiles(dir, files);
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "-m", "initial");
  }
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string | Uint8Array>): void {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}

export function commitAll(dir: string, message: string): string {
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", message);
  return git(dir, "rev-parse", "HEAD").trim();
}

/**
 * Every entry of a folder, except `.git` and what `skip` rejects, as a comparable map: a file's bytes and
 * executable bit, a symlink's target.
 */
export function treeContents(
  dir: string,
  skip: (relative: string) => boolean = () => false,
): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (relativeDir: string) => {
    for (const entry of fs.readdirSync(path.join(dir, relativeDir), { withFileTypes: true })) {
      const relative = path.posix.join(relativeDir, entry.name);
      if (entry.name === ".git" || skip(relative)) continue;
      const full = path.join(dir, relative);
      if (entry.isSymbolicLink()) out.set(relative, `link:${fs.readlinkSync(full)}`);
      else if (entry.isDirectory()) walk(relative);
      else {
        const executable = (fs.statSync(full).mode & 0o100) !== 0;
        out.set(relative, `${executable ? "x" : "-"}:${fs.readFileSync(full).toString("base64")}`);
      }
    }
  };
  walk("");
  return out;
}

/** Copies a folder's files (not `.git`) into a new folder, keeping modes and symlinks. */
export function copyTree(from: string, to: string): void {
  fs.cpSync(from, to, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => path.basename(source) !== ".git",
  });
}
