import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { COMPILE_CACHE_DIR } from "../../src/infra/compile-cache.js";
import { type CliResult, dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { fakeAgentFolder, readJson, reapAll, supervise, tempDir } from "../helpers/folders.js";
import { copyTree, git, isolateGitConfig, makeRepo, treeContents, writeFiles } from "../helpers/git.js";
import { isAlive, waitForPause } from "../helpers/processes.js";
import { waitFor, waitForFile, waitForJson } from "../helpers/wait.js";

// Worktrees, the patch of every change, the private temp and variables passed by name, through the real
// CLI and supervisor on real git repositories.

const RECORD_WAIT_MS = 60_000;
const dispatched: string[] = [];

beforeAll(isolateGitConfig);
afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

function scratch(): string {
  const dir = tempDir("catherd-iso-");
  return dir;
}

function home() {
  const isolated = isolatedHome();
  return isolated;
}

/** Dispatches `sh -c script` with the exec backend; the test's git identity goes to the agent too. */
async function dispatchSh(env: NodeJS.ProcessEnv, flags: string[], script: string): Promise<CliResult> {
  const result = await runCli(
    ["dispatch", "--backend", "exec", "--json", ...flags, "--", "/bin/sh", "-c", script],
    {
      env: {
        ...env,
        GIT_AUTHOR_NAME: "Agent",
        GIT_AUTHOR_EMAIL: "agent@example.invalid",
        GIT_COMMITTER_NAME: "Agent",
        GIT_COMMITTER_EMAIL: "agent@example.invalid",
      },
      timeoutMs: 60_000,
    },
  );
  if (result.code === 0) dispatched.push(dispatchedOf(result).dispatchId);
  return result;
}

async function dispatchOk(env: NodeJS.ProcessEnv, flags: string[], script: string) {
  const result = await dispatchSh(env, flags, script);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return dispatchedOf(result);
}

/** The error a refused `--json` dispatch printed, as "E_CODE: message". */
function errorOf(result: CliResult): string {
  const { error } = JSON.parse(result.stdout) as { error: { code: string; message: string } };
  return `${error.code}: ${error.message}`;
}

function recordOf(dir: string) {
  return waitForJson<Record<string, unknown>>(path.join(dir, "record.json"), RECORD_WAIT_MS);
}

/** A shell line that waits (with its own deadline) for `file` to appear. */
const waitForGo = (file: string) =>
  `i=0; while [ ! -f '${file}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done`;

/** Every regular file under `dir` whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && fs.readFileSync(full).includes(needle)) found.push(full);
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return found;
}

describe("dispatch --worktree", () => {
  it("runs dispatches with overlapping --owns side by side in worktrees, each on its branch, the user's checkout untouched", {
    timeout: 180_000,
  }, async () => {
    const { home: catherdHome, env } = home();
    const repo = makeRepo(path.join(scratch(), "repo"), { "sub/a.txt": "one\n", "README.md": "r\n" });
    const base = git(repo, "rev-parse", "HEAD").trim();
    const go = path.join(scratch(), "go");
    const agent = (tag: string) =>
      `echo "$PWD"; ${waitForGo(go)}; echo ${tag} >> a.txt; git commit -qam "agent ${tag}"; echo loose > loose-${tag}.txt`;
    const a = await dispatchOk(
      env,
      ["--worktree", "--cwd", path.join(repo, "sub"), "--owns", "./", "--name", "a"],
      agent("a"),
    );
    const b = await dispatchOk(
      env,
      ["--worktree", "--cwd", path.join(repo, "sub"), "--owns", "./", "--name", "b"],
      agent("b"),
    );
    // In the user's own checkout, --owns is still checked: sub/ overlaps nothing live there yet, then does.
    const mine = await dispatchOk(env, ["--cwd", repo, "--owns", "sub/", "--name", "here"], waitForGo(go));
    const refused = await dispatchSh(
      env,
      ["--cwd", path.join(repo, "sub"), "--owns", "a.txt", "--name", "there"],
      "true",
    );
    expect(refused.code).toBe(1);
    expect(errorOf(refused)).toMatch(/^E_ADMIT_OVERLAP: --owns .*overlaps .*, owned by live dispatch here/);
    fs.writeFileSync(go, "");

    for (const [d, tag] of [
      [a, "a"],
      [b, "b"],
    ] as const) {
      const record = await recordOf(d.dir);
      const worktreePath = path.join(catherdHome, "runs/default/worktrees", d.dispatchId);
      const branch = `catherd/${tag}-${d.dispatchId.slice(-6)}`;
      const head = git(repo, "rev-parse", branch).trim();
      expect(record).toMatchObject({
        status: "ok",
        worktree: { path: worktreePath, branch, base, head },
        commits: { count: 1, list: [{ sha: head, subject: `agent ${tag}` }] },
      });
      expect(fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8")).toBe(
        `${path.join(worktreePath, "sub")}\n`,
      );
      expect(record.changedFiles).toEqual(["sub/a.txt", `sub/loose-${tag}.txt`]);
      expect(fs.readFileSync(path.join(worktreePath, "sub/a.txt"), "utf8")).toBe(`one\n${tag}\n`);
      expect(readJson(path.join(d.dir, "admit.json"))).toMatchObject({ cwd: path.join(worktreePath, "sub") });
    }
    await recordOf(mine.dir);
    expect(git(repo, "rev-parse", "HEAD").trim()).toBe(base);
    expect(git(repo, "status", "--porcelain")).toBe("");
  });

  it("refuses a folder outside any git repository with E_INPUT_INVALID naming it, and writes nothing", async () => {
    const { home: catherdHome, env } = home();
    const plain = scratch();
    // Node's compile cache (Node >= 22, off under coverage) is the process's, not the dispatch's: left out.
    const homeFiles = () =>
      fs.existsSync(catherdHome) ? fs.readdirSync(catherdHome).filter((f) => f !== COMPILE_CACHE_DIR) : null;
    const before = homeFiles();
    const result = await dispatchSh(env, ["--worktree", "--cwd", plain], "true");
    expect(result.code).toBe(2);
    expect(errorOf(result)).toBe(`E_INPUT_INVALID: --worktree: ${plain} is not inside a git repository`);
    expect(homeFiles()).toEqual(before);

    const repo = makeRepo(path.join(scratch(), "repo"), { "a.txt": "a\n" });
    const badBase = await dispatchSh(env, ["--worktree", "--cwd", repo, "--base", "no-such-branch"], "true");
    expect(errorOf(badBase)).toMatch(/^E_INPUT_INVALID: --base no-such-branch does not name a commit in /);
    const baseAlone = await dispatchSh(env, ["--cwd", repo, "--base", "main"], "true");
    expect(errorOf(baseAlone)).toBe("E_INPUT_INVALID: --base needs --worktree");
    expect(homeFiles()).toEqual(before);
  });
});

describe("changes.patch", () => {
  it("reproduces the end state byte for byte on a copy of the admission state, ignored files left out", {
    timeout: 120_000,
  }, async () => {
    const { env } = home();
    const repo = makeRepo(path.join(scratch(), "repo"), {
      ".gitignore": "*.log\n",
      "bin.dat": randomBytes(3000),
      "rename-me.txt": Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join(""),
      "delete-me.txt": "bye\n",
      "src/keep.ts": "export const k = 1;\n",
    });
    writeFiles(repo, { "user-wip.txt": "the user's own uncommitted work\n" });
    const copy = path.join(scratch(), "copy");
    copyTree(repo, copy);
    const script = [
      "head -c 2000 /dev/urandom > bin.dat",
      "printf 'one\\0two' > src/new.bin",
      "mkdir -p moved && mv rename-me.txt moved/renamed.txt && echo extra >> moved/renamed.txt",
      "rm delete-me.txt",
      "echo untracked > agent-new.txt",
      "echo noise > build.log",
      "chmod +x src/keep.ts",
    ].join(" && ");
    const d = await dispatchOk(env, ["--cwd", repo], script);
    const record = await recordOf(d.dir);
    const patchFile = path.join(d.dir, "changes.patch");
    expect(record).toMatchObject({
      status: "ok",
      patch: { path: patchFile, bytes: fs.statSync(patchFile).size },
    });
    expect(record.changedFiles).toEqual([
      "agent-new.txt",
      "bin.dat",
      "delete-me.txt",
      "moved/renamed.txt",
      "rename-me.txt",
      "src/keep.ts",
      "src/new.bin",
    ]);
    git(copy, "init", "-q");
    git(copy, "apply", patchFile);
    const notLogs = (file: string) => file.endsWith(".log");
    expect(treeContents(copy, notLogs)).toEqual(treeContents(repo, notLogs));
    expect(fs.existsSync(path.join(copy, "build.log"))).toBe(false);

    const result = await runCli(["result", d.dispatchId], { env });
    expect(result.stdout).toContain(`changes: ${patchFile}`);
    expect(result.stdout).toContain(`git apply ${patchFile}`);
  });

  it("holds only the --owns paths, taken from the agent's folder, while changedFiles lists every change", async () => {
    const { env } = home();
    const repo = makeRepo(path.join(scratch(), "repo"), {
      "src/a.ts": "a\n",
      "src/other.ts": "o\n",
      "src/lib/x.ts": "x\n",
      "c.txt": "c\n",
    });
    const d = await dispatchOk(
      env,
      ["--cwd", path.join(repo, "src"), "--owns", "lib/,a.ts"],
      "echo a2 > a.ts && echo o2 > other.ts && echo x2 > lib/x.ts && echo y > lib/y.ts && echo c2 > ../c.txt",
    );
    const record = await recordOf(d.dir);
    expect(record.changedFiles).toEqual([
      "c.txt",
      "src/a.ts",
      "src/lib/x.ts",
      "src/lib/y.ts",
      "src/other.ts",
    ]);
    const patch = fs.readFileSync(path.join(d.dir, "changes.patch"), "utf8");
    expect(patch.match(/^diff --git .*$/gm)).toEqual([
      "diff --git a/src/a.ts b/src/a.ts",
      "diff --git a/src/lib/x.ts b/src/lib/x.ts",
      "diff --git a/src/lib/y.ts b/src/lib/y.ts",
    ]);
  });
});

describe("the agent's environment", () => {
  it("gives the agent a private 0700 TMPDIR (TMP, TEMP) and its own PWD, removed after the stop with its bytes noted", {
    timeout: 120_000,
  }, async () => {
    const { env } = home();
    const work = scratch();
    const go = path.join(scratch(), "go");
    const seen = path.join(scratch(), "seen");
    const script = `printf '%s %s %s %s\\n' "$TMPDIR" "$TMP" "$TEMP" "$PWD" > '${seen}'; head -c 1000 /dev/zero > "$TMPDIR/scratch"; ${waitForGo(go)}`;
    const d = await dispatchOk(env, ["--cwd", work], script);
    const tmp = path.join(d.dir, "tmp");
    expect(await waitForFile(seen, RECORD_WAIT_MS)).toBe(`${tmp} ${tmp} ${tmp} ${work}\n`);
    expect(fs.statSync(tmp).mode & 0o777).toBe(0o700);
    fs.writeFileSync(go, "");
    const record = await recordOf(d.dir);
    expect(record.tmp).toEqual({ path: tmp, bytes: 1000, kept: false });
    expect(fs.existsSync(tmp)).toBe(false);

    const kept = await dispatchOk(env, ["--cwd", work, "--keep-tmp"], 'echo hi > "$TMPDIR/note"');
    const keptRecord = await recordOf(kept.dir);
    expect(keptRecord.tmp).toEqual({ path: path.join(kept.dir, "tmp"), bytes: 3, kept: true });
    expect(fs.readFileSync(path.join(kept.dir, "tmp/note"), "utf8")).toBe("hi\n");
  });

  it("passes --pass-env values by name: the agent sees them, nothing under CATHERD_HOME holds them, show redacts", {
    timeout: 120_000,
  }, async () => {
    // A home that does not exist yet: the first dispatch creates it.
    const catherdHome = path.join(scratch(), "home");
    const env = { ...process.env, CATHERD_HOME: catherdHome, CATHERD_RUN: "" };
    const canary = `canary-${randomBytes(12).toString("hex")}`;
    const seen = path.join(scratch(), "seen");
    const withCanary = { ...env, CANARY_TOKEN: canary };
    // The first dispatch of a home starts its supervisor fresh, the next hands over to a standby: both
    // must carry the value from the dispatcher, never through a file.
    for (const n of [1, 2]) {
      const d = await dispatchOk(
        withCanary,
        [
          "--cwd",
          scratch(),
          "--pass-env",
          "CANARY_TOKEN",
          "--env",
          "API_TOKEN=written-but-redacted",
          "--name",
          `p${n}`,
        ],
        `printf '%s' "$CANARY_TOKEN" > '${seen}.${n}'`,
      );
      await recordOf(d.dir);
      // Its supervisor removes its lock as it exits: the search below must not race that.
      await waitFor(
        "the supervisor to exit",
        () => (isAlive(d.supervisorPid) ? undefined : true),
        RECORD_WAIT_MS,
      );
      expect(fs.readFileSync(`${seen}.${n}`, "utf8")).toBe(canary);
      expect(readJson(path.join(d.dir, "spec.json"))).toMatchObject({ passEnv: ["CANARY_TOKEN"] });
    }
    expect(filesContaining(catherdHome, canary)).toEqual([]);
    const show = await runCli(["show", "p2"], { env: withCanary });
    expect(show.stdout).toContain("passed by name (values never written): CANARY_TOKEN");
    expect(show.stdout).toContain("API_TOKEN=[redacted]");
    expect(show.stdout).not.toContain("written-but-redacted");
    expect(show.stdout).not.toContain(canary);

    const unset = await dispatchSh(env, ["--cwd", scratch(), "--pass-env", "NOT_SET_ANYWHERE"], "true");
    expect(unset.code).toBe(2);
    expect(errorOf(unset)).toBe(
      "E_INPUT_INVALID: --pass-env NOT_SET_ANYWHERE is not set in this environment",
    );
  });
});

describe("what the record writer leaves behind, whoever writes the record", () => {
  it("a reader recording a dispatch whose supervisor died after exit.json writes changes.patch and removes tmp/", {
    timeout: 120_000,
  }, async () => {
    const { env } = home();
    const repo = makeRepo(path.join(scratch(), "repo"), { "a.txt": "a\n" });
    const d = await dispatchOk(
      { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "exited" },
      ["--cwd", repo],
      'echo changed > a.txt && head -c 700 /dev/zero > "$TMPDIR/scratch"',
    );
    const paused = await waitForPause(d.dir, "exited", RECORD_WAIT_MS);
    expect(paused).toBe(d.supervisorPid);
    // Frozen between exit.json and record.json: nothing of the dispatch settled yet.
    expect(fs.existsSync(path.join(d.dir, "changes.patch"))).toBe(false);
    expect(fs.existsSync(path.join(d.dir, "tmp/scratch"))).toBe(true);
    process.kill(paused, "SIGKILL");
    await waitFor("the supervisor to die", () => (isAlive(paused) ? undefined : true));
    expect((await runCli(["status", "--json"], { env })).code).toBe(0);
    const record = readJson(path.join(d.dir, "record.json"));
    const patchFile = path.join(d.dir, "changes.patch");
    expect(record).toMatchObject({
      status: "ok",
      changedFiles: ["a.txt"],
      patch: { path: patchFile, bytes: fs.statSync(patchFile).size },
      tmp: { path: path.join(d.dir, "tmp"), bytes: 700, kept: false },
    });
    expect(fs.readFileSync(patchFile, "utf8")).toContain("+changed");
    expect(fs.existsSync(path.join(d.dir, "tmp"))).toBe(false);
  });

  it("ends spawn-failed, the agent never started, when the worktree cannot be created or a --pass-env variable is missing", async () => {
    const repo = makeRepo(path.join(scratch(), "repo"), { "a.txt": "a\n" });
    const base = git(repo, "rev-parse", "HEAD").trim();
    const ran = path.join(scratch(), "ran");
    const agentSteps = { steps: [{ touch: ran }, { exit: 0 }] };
    // A branch that exists already: git refuses the worktree, and its reason is the error's message.
    const taken = fakeAgentFolder(agentSteps, {
      worktree: { repo, path: path.join(scratch(), "wt"), branch: "main", base },
    });
    const missing = fakeAgentFolder(agentSteps, { passEnv: ["CATHERD_TEST_SURELY_UNSET_VAR"] });
    dispatched.push(taken.id, missing.id);
    for (const { dir } of [taken, missing]) expect((await supervise(dir)).code).toBe(0);
    expect(readJson(path.join(taken.dir, "exit.json"))).toMatchObject({
      reason: "spawn-failed",
      pid: null,
      error: { code: "E_SPAWN_FAILED", message: expect.stringMatching(/^cannot create the worktree .*main/) },
    });
    expect(readJson(path.join(missing.dir, "exit.json"))).toMatchObject({
      reason: "spawn-failed",
      error: {
        code: "E_SPEC_INVALID",
        message: expect.stringContaining("passEnv CATHERD_TEST_SURELY_UNSET_VAR"),
      },
    });
    for (const { dir } of [taken, missing]) {
      expect(readJson(path.join(dir, "record.json"))).toMatchObject({ status: "failed", tmp: null });
    }
    expect(fs.existsSync(ran)).toBe(false);
    expect(git(repo, "worktree", "list").trim().split("\n")).toHaveLength(1);
  });
});

describe("catherd clean", () => {
  it("keeps dirty and unmerged worktrees, removes the rest, never touches a live dispatch; --dry-run changes nothing", {
    timeout: 240_000,
  }, async () => {
    const { home: catherdHome, env } = home();
    const repo = makeRepo(path.join(scratch(), "repo"), { "a.txt": "a\n" });
    const go = path.join(scratch(), "go");
    const wt = ["--worktree", "--cwd", repo];
    const clean = await dispatchOk(env, [...wt, "--name", "clean"], "true");
    const dirty = await dispatchOk(env, [...wt, "--name", "dirty"], "echo unsaved > wip.txt");
    const unmerged = await dispatchOk(
      env,
      [...wt, "--name", "unmerged"],
      "echo c > c.txt && git add c.txt && git commit -qm mine",
    );
    const merged = await dispatchOk(
      env,
      [...wt, "--name", "merged"],
      "echo m > m.txt && git add m.txt && git commit -qm merged",
    );
    const plain = await dispatchOk(env, ["--cwd", scratch(), "--name", "plain"], "true");
    const live = await dispatchOk(env, [...wt, "--name", "live"], waitForGo(go));
    for (const d of [clean, dirty, unmerged, merged, plain]) await recordOf(d.dir);
    const mergedRecord = await recordOf(merged.dir);
    git(repo, "merge", "-q", "--ff-only", (mergedRecord.worktree as { branch: string }).branch);
    const worktreeOf = (d: { dispatchId: string }) =>
      path.join(catherdHome, "runs/default/worktrees", d.dispatchId);
    const branchOf = (d: { dispatchId: string; name: string }) =>
      `catherd/${d.name}-${d.dispatchId.slice(-6)}`;
    const unmergedHead = git(repo, "rev-parse", branchOf(unmerged)).trim();

    // The live dispatch's own folder moves on by itself (its supervisor writes), and each command may add
    // to node's compile cache (Node >= 22, off under coverage): everything else must not.
    const everything = () => [
      ...treeContents(
        catherdHome,
        (file) => file.includes(live.dispatchId) || file.startsWith(`${COMPILE_CACHE_DIR}/`),
      ).entries(),
    ];
    const before = everything();
    const dry = await runCli(["clean", "--older-than", "0", "--dry-run", "--json"], { env });
    expect(dry.code).toBe(0);
    const dryReport = JSON.parse(dry.stdout).clean;
    expect(everything()).toEqual(before);
    expect(dryReport.removed.map((r: { name: string }) => r.name).sort()).toEqual([
      "clean",
      "merged",
      "plain",
    ]);
    expect(dryReport.freedBytes).toBeGreaterThan(0);

    const first = await runCli(["clean", "--older-than", "0", "--json"], { env });
    const report = JSON.parse(first.stdout).clean;
    expect(report.removed.map((r: { name: string }) => r.name).sort()).toEqual(["clean", "merged", "plain"]);
    expect(report.freedBytes).toBe(dryReport.freedBytes);
    const why = Object.fromEntries(report.kept.map((k: { name: string; why: string }) => [k.name, k.why]));
    expect(why).toEqual({
      dirty: "uncommitted changes in its worktree (--force removes it, work and all)",
      unmerged: `1 commit on ${branchOf(unmerged)} that no other branch contains (--force removes it, work and all)`,
      live: "not recorded (live, queued, or not yet settled)",
    });
    for (const d of [clean, merged, plain]) expect(fs.existsSync(d.dir), d.name).toBe(false);
    for (const d of [clean, merged]) expect(fs.existsSync(worktreeOf(d)), d.name).toBe(false);
    for (const d of [dirty, unmerged, live]) {
      expect(fs.existsSync(d.dir), d.name).toBe(true);
      expect(fs.existsSync(worktreeOf(d)), d.name).toBe(true);
    }
    expect(fs.readFileSync(path.join(worktreeOf(dirty), "wip.txt"), "utf8")).toBe("unsaved\n");

    const forced = await runCli(["clean", "--older-than", "0", "--force", "--json"], { env });
    const forcedReport = JSON.parse(forced.stdout).clean;
    expect(forcedReport.removed.map((r: { name: string }) => r.name).sort()).toEqual(["dirty", "unmerged"]);
    expect(forcedReport.kept.map((k: { name: string }) => k.name)).toEqual(["live"]);
    for (const d of [clean, dirty, unmerged, merged]) {
      expect(git(repo, "rev-parse", "--verify", "-q", branchOf(d)).trim(), `${d.name}'s branch`).not.toBe("");
    }
    expect(git(repo, "rev-parse", branchOf(unmerged)).trim()).toBe(unmergedHead);
    expect(fs.existsSync(live.dir)).toBe(true);
    expect(fs.existsSync(path.join(live.dir, "record.json"))).toBe(false);

    fs.writeFileSync(go, "");
    await recordOf(live.dir);
    const young = await runCli(["clean", "--json"], { env });
    expect(JSON.parse(young.stdout).clean).toMatchObject({ removed: [], kept: [], freedBytes: 0 });
    expect(fs.existsSync(live.dir)).toBe(true);
  });
});
