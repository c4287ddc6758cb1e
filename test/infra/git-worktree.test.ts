import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { commitsBetween, commitsOnlyOn } from "../../src/infra/git-commits.js";
import { addWorktree, inspectWorktree, locateRepo, removeWorktree } from "../../src/infra/git-worktree.js";
import { tempDir } from "../helpers/folders.js";
import { commitAll, git, isolateGitConfig, makeRepo, writeFiles } from "../helpers/git.js";

function scratch(): string {
  const dir = tempDir("catherd-git-");
  return dir;
}

beforeAll(isolateGitConfig);
const BRANCH = "catherd/fix-tests-k3x9qa";

/** A repository with two commits, and a worktree of it on a new branch from the first. */
async function repoWithWorktree() {
  const home = scratch();
  const repo = makeRepo(path.join(home, "repo"), { "README.md": "one\n", "pkg/sub/file.ts": "x\n" });
  const first = git(repo, "rev-parse", "HEAD").trim();
  writeFiles(repo, { "README.md": "two\n" });
  const second = commitAll(repo, "second");
  const worktreePath = path.join(home, "run/worktrees/20261129T081530Z-k3x9qa");
  const added = await addWorktree(repo, { path: worktreePath, branch: BRANCH, base: "HEAD~1" });
  if (!added.ok) throw new Error(added.reason);
  return { repo, first, second, worktreePath, worktree: added.worktree };
}

describe("locateRepo", () => {
  it("finds the top of the work tree and the folder's place inside it", async () => {
    const repo = makeRepo(path.join(scratch(), "repo"), { "a/b/c.txt": "c\n" });
    expect(await locateRepo(path.join(repo, "a/b"))).toEqual({ root: fs.realpathSync(repo), prefix: "a/b/" });
    expect(await locateRepo(repo)).toEqual({ root: fs.realpathSync(repo), prefix: "" });
  });

  it("is null outside a git work tree", async () => {
    expect(await locateRepo(scratch())).toBeNull();
  });
});

describe("addWorktree", () => {
  it("creates the worktree on a new branch at the base commit, parent folders included", async () => {
    const { repo, first, worktreePath, worktree } = await repoWithWorktree();
    expect(worktree).toEqual({ path: worktreePath, branch: BRANCH, base: first });
    expect(git(worktreePath, "rev-parse", "--abbrev-ref", "HEAD").trim()).toBe(BRANCH);
    expect(git(worktreePath, "rev-parse", "HEAD").trim()).toBe(first);
    expect(fs.readFileSync(path.join(worktreePath, "README.md"), "utf8")).toBe("one\n");
    expect(fs.existsSync(path.join(worktreePath, "pkg/sub/file.ts"))).toBe(true);
    // The user's checkout stays on its branch.
    expect(git(repo, "rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("main");
  });

  it("refuses a base that is not a commit, a branch that exists, and an invalid branch name", async () => {
    const { repo } = await repoWithWorktree();
    const elsewhere = path.join(scratch(), "wt");
    const noBase = await addWorktree(repo, { path: elsewhere, branch: "catherd/a-1", base: "no-such-ref" });
    expect(noBase).toEqual({ ok: false, reason: "no-such-ref does not name a commit" });
    const taken = await addWorktree(repo, { path: elsewhere, branch: BRANCH, base: "HEAD" });
    expect(taken.ok).toBe(false);
    if (!taken.ok) expect(taken.reason).toContain(BRANCH);
    const invalid = await addWorktree(repo, { path: elsewhere, branch: "catherd/a..b", base: "HEAD" });
    expect(invalid).toEqual({ ok: false, reason: "catherd/a..b is not a valid branch name" });
    expect(fs.existsSync(elsewhere)).toBe(false);
  });
});

describe("inspectWorktree", () => {
  it("finds a fresh worktree clean, with no commits of its own", async () => {
    const { repo, first, worktree } = await repoWithWorktree();
    expect(await inspectWorktree(repo, worktree)).toEqual({
      exists: true,
      head: first,
      dirty: false,
      unmerged: [],
    });
  });

  it("finds modified and untracked files dirty, ignored files not", async () => {
    const { repo, worktree, worktreePath } = await repoWithWorktree();
    writeFiles(worktreePath, { ".gitignore": "*.log\n" });
    expect((await inspectWorktree(repo, worktree)).dirty).toBe(true); // untracked .gitignore
    commitAll(worktreePath, "ignore logs");
    writeFiles(worktreePath, { "build.log": "noise\n" });
    expect((await inspectWorktree(repo, worktree)).dirty).toBe(false);
    writeFiles(worktreePath, { "README.md": "edited\n" });
    expect((await inspectWorktree(repo, worktree)).dirty).toBe(true);
  });

  it("finds commits no other branch contains, until a branch or a merge holds them", async () => {
    const { repo, worktree, worktreePath } = await repoWithWorktree();
    writeFiles(worktreePath, { "new.txt": "agent work\n" });
    const agentCommit = commitAll(worktreePath, "agent work");
    expect(await inspectWorktree(repo, worktree)).toMatchObject({ dirty: false, unmerged: [agentCommit] });
    git(repo, "branch", "keep-it", agentCommit);
    expect((await inspectWorktree(repo, worktree)).unmerged).toEqual([]);
    git(repo, "branch", "-D", "keep-it");
    git(repo, "merge", "-q", "--no-edit", BRANCH);
    expect((await inspectWorktree(repo, worktree)).unmerged).toEqual([]);
  });

  it("counts commits on a detached HEAD inside the worktree, and on its branch when the folder is gone", async () => {
    const { repo, worktree, worktreePath } = await repoWithWorktree();
    writeFiles(worktreePath, { "on-branch.txt": "b\n" });
    const onBranch = commitAll(worktreePath, "on the branch");
    git(worktreePath, "checkout", "-q", "--detach");
    writeFiles(worktreePath, { "detached.txt": "d\n" });
    const detached = commitAll(worktreePath, "detached");
    expect((await inspectWorktree(repo, worktree)).unmerged?.sort()).toEqual([onBranch, detached].sort());
    fs.rmSync(worktreePath, { recursive: true, force: true });
    expect(await inspectWorktree(repo, worktree)).toEqual({
      exists: false,
      head: null,
      dirty: false,
      unmerged: [onBranch],
    });
  });

  it("answers unknown, not clean, when the worktree's repository is gone", async () => {
    const { repo, worktree } = await repoWithWorktree();
    fs.rmSync(path.join(repo, ".git"), { recursive: true, force: true });
    const state = await inspectWorktree(repo, worktree);
    expect(state.dirty).toBeNull();
    expect(state.unmerged).toBeNull();
  });
});

describe("removeWorktree", () => {
  it("removes a clean worktree and keeps its branch", async () => {
    const { repo, worktree, worktreePath } = await repoWithWorktree();
    writeFiles(worktreePath, { "new.txt": "agent work\n" });
    const agentCommit = commitAll(worktreePath, "agent work");
    expect(await removeWorktree(repo, worktreePath, false)).toEqual({ ok: true });
    expect(fs.existsSync(worktreePath)).toBe(false);
    expect(git(repo, "rev-parse", `refs/heads/${worktree.branch}`).trim()).toBe(agentCommit);
    expect(git(repo, "worktree", "list", "--porcelain")).not.toContain(worktreePath);
  });

  it("leaves a dirty worktree alone without force, removes it with force, and keeps the branch both times", async () => {
    const { repo, first, worktree, worktreePath } = await repoWithWorktree();
    writeFiles(worktreePath, { "untracked.txt": "unsaved\n" });
    const refused = await removeWorktree(repo, worktreePath, false);
    expect(refused.ok).toBe(false);
    expect(fs.readFileSync(path.join(worktreePath, "untracked.txt"), "utf8")).toBe("unsaved\n");
    expect(await removeWorktree(repo, worktreePath, true)).toEqual({ ok: true });
    expect(fs.existsSync(worktreePath)).toBe(false);
    expect(git(repo, "rev-parse", `refs/heads/${worktree.branch}`).trim()).toBe(first);
  });

  it("forgets a worktree whose folder was already deleted", async () => {
    const { repo, worktreePath } = await repoWithWorktree();
    fs.rmSync(worktreePath, { recursive: true, force: true });
    expect(await removeWorktree(repo, worktreePath, false)).toEqual({ ok: true });
    expect(git(repo, "worktree", "list", "--porcelain")).not.toContain(worktreePath);
  });
});

describe("commitsBetween and commitsOnlyOn", () => {
  it("lists the commits made after the base, oldest first, with a count past the limit", async () => {
    const { repo, first, worktreePath } = await repoWithWorktree();
    const made: string[] = [];
    for (const n of [1, 2, 3]) {
      writeFiles(worktreePath, { [`f${n}.txt`]: `${n}\n` });
      made.push(commitAll(worktreePath, `step ${n}`));
    }
    const head = made[2] as string;
    expect(await commitsBetween(repo, first, head)).toEqual({
      count: 3,
      commits: made.map((sha, i) => ({ sha, subject: `step ${i + 1}` })),
    });
    expect(await commitsBetween(repo, first, head, 2)).toEqual({
      count: 3,
      commits: made.slice(1).map((sha, i) => ({ sha, subject: `step ${i + 2}` })),
    });
    expect(await commitsBetween(repo, head, head)).toEqual({ count: 0, commits: [] });
    expect(await commitsBetween(repo, first, "f".repeat(40))).toBeNull();
  });

  it("takes a branch name with glob characters literally when excluding it", async () => {
    const repo = makeRepo(path.join(scratch(), "repo"), { "a.txt": "a\n" });
    git(repo, "checkout", "-q", "-b", "catherd/x-1");
    writeFiles(repo, { "b.txt": "b\n" });
    const mine = commitAll(repo, "mine");
    git(repo, "branch", "catherd/x-2");
    expect(await commitsOnlyOn(repo, [mine], "catherd/x-?")).toEqual([]);
    git(repo, "branch", "-D", "catherd/x-2");
    expect(await commitsOnlyOn(repo, [mine], "catherd/x-1")).toEqual([mine]);
    expect(await commitsOnlyOn(repo, [], "catherd/x-1")).toEqual([]);
  });
});
