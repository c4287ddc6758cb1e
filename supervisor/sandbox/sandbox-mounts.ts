import * as fs from "node:fs";
import * as path from "node:path";
import {
  type CatherdPlaces,
  deniedUnderHome,
  isWithin,
  isWorktreePlace,
  type SandboxPolicy,
  sandboxMayWrite,
  writableUnderHome,
} from "../../src/domain/sandbox/sandbox.js";
import type { BackendId } from "../../src/domain/vocab.js";

// The file side of the sandbox (specs/sandbox.md, "Files") as bubblewrap's mount options: the whole system
// read-only; its workplace, CLI state and --allow-write writable; then catherd's home and the dispatch
// folder read-only again over them, the home's dispatch folders and worktrees hidden but the agent's own,
// and only its temp folder, lock slots and worktree writable inside; git's hooks and config read-only
// again; the deny list hidden last, so that no writable folder above a secret shows it. Which paths exist is read
// here: bubblewrap cannot mount onto nothing, and a path made later falls under a read-only parent.

/** What the mounts are made of: the dispatch and the places it knows. Paths absolute. */
export interface SandboxPlaces {
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
  /** The CLI's state folders to make before the sandbox is up, where they do not exist yet. */
  stateToMake: readonly string[];
  /** Unix sockets of this account that lead out of any sandbox (an ssh agent, a desktop bus): hidden. */
  sockets: readonly string[];
}

/** Mount options in the order bubblewrap applies them, and what they leave writable, read-only and hidden (said in sandbox.log). */
export interface SandboxMounts {
  args: string[];
  /** What the agent may write: these and what is below them, but for `readOnly` and `hidden`. */
  writable: string[];
  /** catherd's own places and a repository's hooks and config: read-only whatever writable place holds them. */
  readOnly: string[];
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

/** The sandbox's file mounts for one dispatch, decided from real paths as the sandbox goes up. */
export function sandboxMounts(places: SandboxPlaces): SandboxMounts {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev"];
  fs.mkdirSync(path.join(places.home, "locks"), { recursive: true });
  fs.mkdirSync(places.lockReports, { recursive: true });
  // The CLI's state folders it would make on its first run are made now (it could not inside): under the
  // agent's own HOME and where its environment moves them, never in another home.
  for (const state of places.stateToMake) fs.mkdirSync(state, { recursive: true });
  const own: CatherdPlaces = {
    home: realOrSelf(places.home),
    dir: realOrSelf(places.dir),
    scratch: [places.tmp, places.lockReports].map(realOrSelf),
  };
  const git = gitDirsOf(places.cwd);
  const writes = places.policy.workplace !== "read";
  const workplace = [places.worktree ?? places.cwd, places.cwd].map(realOrSelf);
  const writable = byDepth(
    [
      ...(writes ? workplace : []),
      places.tmp,
      places.lockReports,
      path.join(places.home, "locks"),
      ...(writes ? git.gitDirs : []),
      ...places.homes.flatMap((home) =>
        writableUnderHome(places.backend).map((name) => path.join(home, name)),
      ),
      ...places.stateElsewhere,
      ...places.policy.allowWrite,
    ]
      .map(realOrSelf)
      .filter(exists)
      .filter((file) => sandboxMayWrite(file, own)),
  );
  const isOwn = (file: string) => isWithin(file, own.home) || isWithin(file, own.dir);
  for (const file of writable.filter((w) => !isOwn(w))) args.push("--bind", file, file);
  const readOnly = guardOwnPlaces(args, own, workplace.filter(exists));
  for (const file of writable.filter(isOwn)) args.push("--bind", file, file);
  if (isDir(path.join(own.home, "runs"))) args.push("--remount-ro", path.join(own.home, "runs"));
  // What catherd judges a repository by: its hooks run on the user's next commit, its config names them.
  const gitGuarded =
    git.common === null ? [] : ["hooks", "config"].map((n) => path.join(git.common as string, n));
  for (const file of gitGuarded.filter(exists)) args.push("--ro-bind", file, file);
  const hidden = hiddenPlaces(places);
  for (const file of hidden) {
    if (isDir(file)) args.push("--tmpfs", file, "--remount-ro", file);
    else args.push("--ro-bind", "/dev/null", file);
  }
  return { args, writable, readOnly: [...readOnly, ...gitGuarded.filter(exists)], hidden };
}

/**
 * catherd's own places read-only again over any writable place that holds them (a workplace or an
 * --allow-write above the home): the home, its `runs/` an empty folder (every other dispatch folder and
 * worktree), and the dispatch's own folder and its worktree workplace shown again, read-only. The binds of
 * what may be written inside them come after; `runs/` is remounted read-only once they are made. Returns
 * the places made read-only.
 */
function guardOwnPlaces(args: string[], own: CatherdPlaces, workplace: readonly string[]): string[] {
  const runs = path.join(own.home, "runs");
  const readOnly: string[] = [];
  if (isDir(own.home)) {
    args.push("--ro-bind", own.home, own.home);
    readOnly.push(own.home);
  }
  if (isDir(runs)) args.push("--tmpfs", runs);
  const shown = byDepth([own.dir, ...workplace.filter((w) => isWorktreePlace(w, own.home))]);
  for (const file of shown) args.push("--ro-bind", file, file);
  return [...readOnly, own.dir];
}

/**
 * The deny list under each home, --deny-read and the sockets that lead out: hidden last, so that no
 * writable folder above a secret shows it.
 */
function hiddenPlaces(places: SandboxPlaces): string[] {
  return byDepth(
    [
      ...places.homes.flatMap((home) => deniedUnderHome(places.backend).map((name) => path.join(home, name))),
      ...places.policy.denyRead,
      ...places.sockets,
    ]
      .map(realOrSelf)
      .filter(exists)
      // The agent's own places are never hidden from it (a --deny-read of its workplace is its user's mistake
      // the sandbox does not make: the agent could do no work).
      .filter((file) => !isWithin(places.cwd, file) && !isWithin(places.dir, file)),
  );
}
