import * as fs from "node:fs";
import * as path from "node:path";
import {
  deniedUnderHome,
  isWithin,
  type SandboxPolicy,
  writableUnderHome,
} from "../../src/domain/sandbox.js";
import type { BackendId } from "../../src/domain/vocab.js";

// The file side of the fence (specs/sandbox.md, "Files") as bubblewrap's mount options: the whole system
// read-only; catherd's dispatch folders and worktrees hidden but the agent's own; its workplace, temp
// folder, CLI state, lock slots and --allow-write writable; git's hooks and config read-only again; the
// deny list hidden last, so that no writable folder above a secret shows it. Which paths exist is read
// here: bubblewrap cannot mount onto nothing, and a path made later falls under a read-only parent.

/** What the mounts are made of: the dispatch and the places it knows. Paths absolute. */
export interface FencePlaces {
  backend: BackendId;
  policy: SandboxPolicy;
  /** The dispatch folder: readable by its agent, never writable but for `tmp` and `locks`. */
  dir: string;
  /** Its workplace: `--cwd`, or its worktree's folder. */
  cwd: string;
  /** The worktree's root, when it has one. */
  worktree: string | null;
  /** Its private temp folder (TMPDIR). */
  tmp: string;
  /** The folder its `catherd lock` reports are written in. */
  lockReports: string;
  /** The catherd home: its `runs` hidden (other dispatches, other worktrees), its `locks` writable. */
  home: string;
  /** The agent's HOME and the account's own home (the password database's): the deny list covers both. */
  homes: readonly string[];
  /** The CLI's state folders its environment names (CODEX_HOME…): writable as those under a home. */
  stateElsewhere: readonly string[];
  /** The CLI's state folders to make before the fence is up, where they do not exist yet. */
  stateToMake: readonly string[];
  /** Unix sockets of this account that lead out of any fence (an ssh agent, a desktop bus): hidden. */
  sockets: readonly string[];
}

/** Mount options in the order bubblewrap applies them, and what they hide (said in sandbox.log). */
export interface FenceMounts {
  args: string[];
  writable: string[];
  hidden: string[];
}

function realOrSelf(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

const exists = (file: string) => fs.existsSync(file);
const isDir = (file: string) => fs.statSync(file, { throwIfNoEntry: false })?.isDirectory() === true;

/** The git folders a commit in `cwd` writes: its own .git (or a worktree's and the repository's common one). */
export function gitDirsOf(cwd: string): { gitDirs: string[]; common: string | null } {
  for (let at = cwd; ; at = path.dirname(at)) {
    const dotGit = path.join(at, ".git");
    const stat = fs.statSync(dotGit, { throwIfNoEntry: false });
    if (stat?.isDirectory()) return { gitDirs: [dotGit], common: dotGit };
    if (stat?.isFile()) {
      const pointer = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(dotGit, "utf8"))?.[1]?.trim();
      if (pointer === undefined) return { gitDirs: [], common: null };
      const gitDir = path.resolve(at, pointer);
      const commonFile = path.join(gitDir, "commondir");
      const common = exists(commonFile)
        ? path.resolve(gitDir, fs.readFileSync(commonFile, "utf8").trim())
        : gitDir;
      return { gitDirs: [gitDir, common], common };
    }
    if (path.dirname(at) === at) return { gitDirs: [], common: null };
  }
}

/** Parents first, so that a bind below another is made on top of it. */
function byDepth(paths: readonly string[]): string[] {
  return [...new Set(paths)].sort((a, b) => a.split("/").length - b.split("/").length || a.localeCompare(b));
}

export function fenceMounts(places: FencePlaces): FenceMounts {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev"];
  const runs = path.join(places.home, "runs");
  const locks = path.join(places.home, "locks");
  fs.mkdirSync(locks, { recursive: true });
  fs.mkdirSync(places.lockReports, { recursive: true });
  const stateUnderHome = [
    ...places.homes.flatMap((home) => writableUnderHome(places.backend).map((name) => path.join(home, name))),
    ...places.stateElsewhere,
  ];
  // The CLI's state folders it would make on its first run are made now (it could not inside): under the
  // agent's own HOME and where its environment moves them, never in another home.
  for (const state of places.stateToMake) fs.mkdirSync(state, { recursive: true });
  const git = gitDirsOf(places.cwd);
  const writable = byDepth(
    [
      ...(places.policy.workplace === "read" ? [] : [places.worktree ?? places.cwd, places.cwd]),
      places.tmp,
      places.lockReports,
      locks,
      ...(places.policy.workplace === "read" ? [] : git.gitDirs),
      ...stateUnderHome,
      ...places.policy.allowWrite,
    ]
      .map(realOrSelf)
      .filter(exists),
  );
  for (const file of writable) args.push("--bind", file, file);
  // Other dispatch folders and worktrees: an empty folder over them all (after the binds: a workplace
  // that holds the catherd home must not show them again), then this dispatch's own places again.
  if (isDir(runs) && isWithin(places.dir, runs)) {
    args.push("--tmpfs", runs, "--ro-bind", places.dir, places.dir);
    for (const file of writable.filter((w) => isWithin(w, runs))) args.push("--bind", file, file);
    // Read-only once the binds below it are made (the remount is of the empty folder alone).
    args.push("--remount-ro", runs);
  }
  // What catherd judges a repository by: its hooks run on the user's next commit, its config names them.
  const gitGuarded =
    git.common === null ? [] : ["hooks", "config"].map((n) => path.join(git.common as string, n));
  for (const file of gitGuarded.filter(exists)) args.push("--ro-bind", file, file);

  const hidden = byDepth(
    [
      ...places.homes.flatMap((home) => deniedUnderHome(places.backend).map((name) => path.join(home, name))),
      ...places.policy.denyRead,
      ...places.sockets,
    ]
      .map(realOrSelf)
      .filter(exists)
      // The agent's own places are never hidden from it (a --deny-read of its workplace is its user's mistake
      // the fence does not make: the agent could do no work).
      .filter((file) => !isWithin(places.cwd, file) && !isWithin(places.dir, file)),
  );
  for (const file of hidden) {
    if (isDir(file)) args.push("--tmpfs", file, "--remount-ro", file);
    else args.push("--ro-bind", "/dev/null", file);
  }
  return { args, writable, hidden };
}
