import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runGit } from "../../src/infra/git-command.js";
import {
  changedPaths,
  mayBeInRepository,
  ownsPathspecs,
  snapshotWorkTree,
  type TreeSnapshot,
  treeOfCommit,
  writePatch,
} from "../../src/infra/git-tree.js";
import { tempDir } from "../helpers/folders.js";
import {
  commitAll,
  copyTree,
  git,
  isolateGitConfig,
  makeRepo,
  treeContents,
  writeFiles,
} from "../helpers/git.js";

function scratch(): string {
  const dir = tempDir("catherd-git-");
  return dir;
}

beforeAll(isolateGitConfig);
async function snapshot(cwd: string): Promise<TreeSnapshot> {
  const taken = await snapshotWorkTree(cwd);
  if (!taken.ok) throw new Error(`no snapshot: ${taken.reason}`);
  return taken;
}

const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} line ${i}\n`).join("");
const ignoredLogs = (relative: string) => relative.endsWith(".log");

/** A repository with history, then uncommitted work before the admission snapshot. */
function repoAtAdmission(): string {
  const repo = makeRepo(path.join(scratch(), "repo"), {
    ".gitignore": "*.log\n",
    "a.txt": lines(20, "a"),
    "bin.dat": randomBytes(4096),
    "rename-me.txt": lines(60, "r"),
    "delete-me.txt": lines(5, "d"),
    "src/keep.ts": "export const keep = 1;\n",
    "src/edit.ts": "export const edit = 1;\n",
    "lit*.txt": "a star in the name\n",
    "lit-other.txt": "no star\n",
    "run.sh": "#!/bin/sh\necho hi\n",
  });
  fs.symlinkSync("a.txt", path.join(repo, "link-to-a"));
  commitAll(repo, "a symlink");
  // Uncommitted and untracked work the user had before the dispatch: part of the admission state.
  writeFiles(repo, {
    "a.txt": `${lines(20, "a")}user edit\n`,
    "user-untracked.txt": "mine\n",
    "old.log": "x\n",
  });
  return repo;
}

/** What an agent does: edits, binary rewrite, rename, delete, mode change, untracked and ignored files, a commit. */
function agentWork(repo: string): void {
  writeFiles(repo, {
    "a.txt": `agent first\n${lines(20, "a")}user edit\n`,
    "bin.dat": Buffer.concat([randomBytes(2048), Buffer.from([0, 0, 255]), randomBytes(100)]),
    "src/edit.ts": "export const edit = 2;\n",
    "src/new/deep.bin": randomBytes(333),
    "lit*.txt": "the star file changed\n",
    "lit-other.txt": "the other changed\n",
    "agent-untracked.txt": "new, never added\n",
    "agent.log": "ignored, never in a patch\n",
  });
  fs.mkdirSync(path.join(repo, "moved"));
  fs.renameSync(path.join(repo, "rename-me.txt"), path.join(repo, "moved/renamed.txt"));
  fs.appendFileSync(path.join(repo, "moved/renamed.txt"), "one more line\n");
  fs.rmSync(path.join(repo, "delete-me.txt"));
  fs.chmodSync(path.join(repo, "run.sh"), 0o755);
  fs.rmSync(path.join(repo, "link-to-a"));
  fs.symlinkSync("src/keep.ts", path.join(repo, "link-to-a"));
  git(repo, "add", "moved", "rename-me.txt");
  git(repo, "commit", "-q", "-m", "agent moves a file");
}

function applyOn(copy: string, patch: string): void {
  git(copy, "init", "-q");
  git(copy, "apply", "--whitespace=nowarn", patch);
}

describe("snapshotWorkTree and writePatch", () => {
  it("gives a patch that turns a copy of the admission state into the end state byte for byte", async () => {
    const repo = repoAtAdmission();
    const copy = path.join(scratch(), "copy");
    copyTree(repo, copy);
    const before = await snapshot(repo);
    agentWork(repo);
    const after = await snapshot(repo);
    expect(after.head).not.toBe(before.head);

    const patch = path.join(scratch(), "changes.patch");
    const written = await writePatch(before.root, { from: before.tree, to: after.tree }, [], patch);
    expect(written).toEqual({ ok: true, bytes: fs.statSync(patch).size });
    expect((fs.statSync(patch).mode & 0o777).toString(8)).toBe("600");
    const text = fs.readFileSync(patch, "utf8");
    expect(text).toContain("GIT binary patch");
    expect(text).toContain("rename from rename-me.txt");
    expect(text).toContain("deleted file mode");
    expect(text).toContain("new mode 100755");
    expect(text).toContain("agent-untracked.txt");
    expect(text).not.toContain("agent.log");
    expect(text).not.toContain("user-untracked.txt"); // there before admission: not the agent's change

    applyOn(copy, patch);
    expect(treeContents(copy, ignoredLogs)).toEqual(treeContents(repo, ignoredLogs));
    expect(fs.existsSync(path.join(copy, "agent.log"))).toBe(false);
  });

  it("restricts the patch to --owns: folders with a slash, single files exactly, names taken literally", async () => {
    const repo = repoAtAdmission();
    const copy = path.join(scratch(), "copy");
    copyTree(repo, copy);
    const admission = treeContents(copy, ignoredLogs);
    const before = await snapshot(repo);
    agentWork(repo);
    const after = await snapshot(repo);
    const owns = ["src/", "lit*.txt", "moved/"];
    const patch = path.join(scratch(), "owned.patch");
    expect((await writePatch(before.root, { from: before.tree, to: after.tree }, owns, patch)).ok).toBe(true);
    applyOn(copy, patch);

    const end = treeContents(repo, ignoredLogs);
    const result = treeContents(copy, ignoredLogs);
    const owned = (file: string) =>
      file.startsWith("src/") || file === "lit*.txt" || file.startsWith("moved/");
    for (const file of new Set([...end.keys(), ...admission.keys()])) {
      expect([file, result.get(file)]).toEqual([file, owned(file) ? end.get(file) : admission.get(file)]);
    }
    // The rename crossed the boundary: only its owned side, as a new file.
    expect(result.has("rename-me.txt")).toBe(true);
    expect(result.get("moved/renamed.txt")).toBe(end.get("moved/renamed.txt"));
  });

  it("lists changed paths from the same two trees, both names of a rename, no ignored file", async () => {
    const repo = repoAtAdmission();
    const before = await snapshot(repo);
    agentWork(repo);
    const after = await snapshot(repo);
    expect(await changedPaths(before.root, before.tree, after.tree)).toEqual([
      "a.txt",
      "agent-untracked.txt",
      "bin.dat",
      "delete-me.txt",
      "link-to-a",
      "lit*.txt",
      "lit-other.txt",
      "moved/renamed.txt",
      "rename-me.txt",
      "run.sh",
      "src/edit.ts",
      "src/new/deep.bin",
    ]);
    expect(await changedPaths(before.root, before.tree, after.tree, ["src/"])).toEqual([
      "src/edit.ts",
      "src/new/deep.bin",
    ]);
    expect(await changedPaths(before.root, before.tree, before.tree)).toEqual([]);
  });

  it("takes an owned file to be that file only, not a folder of the same name", async () => {
    const repo = makeRepo(path.join(scratch(), "file-to-folder"), { docs: "a file\n", "other.txt": "o\n" });
    const before = await snapshot(repo);
    fs.rmSync(path.join(repo, "docs"));
    writeFiles(repo, { "docs/inside.md": "now a folder\n" });
    const after = await snapshot(repo);
    expect(await changedPaths(repo, before.tree, after.tree)).toEqual(["docs", "docs/inside.md"]);
    expect(await changedPaths(repo, before.tree, after.tree, ["docs"])).toEqual(["docs"]);
    expect(await changedPaths(repo, before.tree, after.tree, ["docs/"])).toEqual(["docs/inside.md"]);
  });

  it("leaves the user's index, stash and status exactly as they were", async () => {
    const repo = repoAtAdmission();
    git(repo, "add", "user-untracked.txt"); // something staged, to see that it stays staged
    const index = fs.readFileSync(path.join(repo, ".git/index"));
    const status = git(repo, "status", "--porcelain=v1");
    await snapshot(repo);
    agentWork(repo);
    const statusAfterWork = git(repo, "status", "--porcelain=v1");
    const indexAfterWork = fs.readFileSync(path.join(repo, ".git/index"));
    await snapshot(path.join(repo, "src"));
    expect(fs.readFileSync(path.join(repo, ".git/index"))).toEqual(indexAfterWork);
    expect(git(repo, "status", "--porcelain=v1")).toBe(statusAfterWork);
    expect(git(repo, "stash", "list")).toBe("");
    expect(status).toContain("A  user-untracked.txt");
    expect(index.length).toBeGreaterThan(0);
  });

  it("snapshots from a subfolder the whole work tree, the same tree as from the top", async () => {
    const repo = repoAtAdmission();
    const top = await snapshot(repo);
    const sub = await snapshot(path.join(repo, "src"));
    expect(sub).toEqual({ ...top, prefix: "src/" });
    expect(top.prefix).toBe("");
    expect(await treeOfCommit(repo, "HEAD")).toBe(git(repo, "rev-parse", "HEAD^{tree}").trim());
    expect(await treeOfCommit(repo, "no-such-ref")).toBeNull();
  });

  it("snapshots an unborn branch, untracked files included, with no HEAD", async () => {
    const repo = makeRepo(path.join(scratch(), "unborn"));
    const empty = await snapshot(repo);
    expect(empty.head).toBeNull();
    writeFiles(repo, { "first.txt": "hello\n", "bin/x.dat": randomBytes(64) });
    const later = await snapshot(repo);
    expect(await changedPaths(repo, empty.tree, later.tree)).toEqual(["bin/x.dat", "first.txt"]);
  });

  it("falls back to HEAD's tree when the repository has no index file", async () => {
    const repo = makeRepo(path.join(scratch(), "no-index"), { "kept.txt": "k\n", ".gitignore": "*.log\n" });
    // Tracked although ignored: only a snapshot that starts from HEAD keeps it.
    writeFiles(repo, { "tracked.log": "forced in\n" });
    git(repo, "add", "-f", "tracked.log");
    commitAll(repo, "a tracked log");
    const withIndex = await snapshot(repo);
    fs.rmSync(path.join(repo, ".git/index"));
    const withoutIndex = await snapshot(repo);
    expect(withoutIndex.tree).toBe(withIndex.tree);
    expect(git(repo, "ls-tree", "--name-only", withoutIndex.tree)).toContain("tracked.log");
  });

  it("says why when the folder is not in a git work tree, and writes no patch for an unknown tree", async () => {
    const plain = scratch();
    const taken = await snapshotWorkTree(plain);
    expect(taken.ok).toBe(false);
    if (!taken.ok) expect(taken.reason).toMatch(/not in a git repository/);
    const patch = path.join(plain, "changes.patch");
    const written = await writePatch(plain, { from: "0".repeat(40), to: "1".repeat(40) }, [], patch);
    expect(written.ok).toBe(false);
    expect(fs.readdirSync(plain)).toEqual([]);
    expect(await changedPaths(plain, "0".repeat(40), "1".repeat(40))).toBeNull();
  });
});

describe("mayBeInRepository", () => {
  it("says no only where git's walk up finds neither .git nor HEAD, along the real path", () => {
    const plain = scratch();
    fs.mkdirSync(path.join(plain, "a/b"), { recursive: true });
    expect(mayBeInRepository(path.join(plain, "a/b"))).toBe(false);

    const repo = makeRepo(path.join(scratch(), "repo"), { "src/x.ts": "x\n" });
    expect(mayBeInRepository(path.join(repo, "src"))).toBe(true);
    // A symlink from outside into the repository: git walks the real path.
    fs.symlinkSync(path.join(repo, "src"), path.join(plain, "into-repo"));
    expect(mayBeInRepository(path.join(plain, "into-repo"))).toBe(true);

    const worktree = path.join(scratch(), "linked");
    git(repo, "worktree", "add", "-q", "--detach", worktree);
    expect(fs.statSync(path.join(worktree, ".git")).isFile()).toBe(true);
    expect(mayBeInRepository(worktree)).toBe(true);

    const bare = path.join(scratch(), "bare.git");
    git(repo, "clone", "-q", "--bare", repo, bare);
    expect(mayBeInRepository(bare)).toBe(true);
    // A folder that cannot be resolved is left to git.
    expect(mayBeInRepository(path.join(plain, "gone"))).toBe(true);
  });

  it("agrees with git on every folder it says no to", async () => {
    const plain = scratch();
    expect(mayBeInRepository(plain)).toBe(false);
    const taken = await snapshotWorkTree(plain);
    expect(taken.ok).toBe(false);
    const asked = await runGit(plain, ["rev-parse", "--show-toplevel"]);
    expect(asked.ok).toBe(false);
  });
});

describe("ownsPathspecs", () => {
  it("makes a folder of a trailing slash and exactly one file otherwise, literally, from the top", () => {
    expect(ownsPathspecs([])).toEqual([]);
    expect(ownsPathspecs(["src/", "a*.ts"])).toEqual([
      ":(top,literal)src/",
      ":(top,literal)a*.ts",
      ":(top,literal,exclude)a*.ts/",
    ]);
  });
});
