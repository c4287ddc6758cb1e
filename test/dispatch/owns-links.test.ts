import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CliResult, dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { readJson, reapAll, tempDir } from "../helpers/folders.js";
import { waitForFile } from "../helpers/wait.js";

// --owns overlaps are judged on paths as the file system resolves them (specs/dispatch.md §2, step 4): a
// folder named through a symbolic link — as --cwd, as an --owns path, or through a link to a folder above
// it — is the folder it names. Through the built CLI, against a live dispatch that owns a real folder.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

async function dispatchSh(env: NodeJS.ProcessEnv, flags: string[], script: string): Promise<CliResult> {
  const result = await runCli(
    ["dispatch", "--backend", "exec", "--json", "--kill-grace", "300ms", ...flags, "--", "sh", "-c", script],
    { env, timeoutMs: 60_000 },
  );
  if (result.code === 0) dispatched.push(dispatchedOf(result).dispatchId);
  return result;
}

const errorOf = (r: CliResult) => {
  const { code, message } = (JSON.parse(r.stdout) as { error: { code: string; message: string } }).error;
  return `${code}: ${message}`;
};

/** A shell loop that waits (at most a minute) for `go` to exist: a dispatch that stays live until told. */
const waitForGo = (go: string) =>
  `i=0; while [ ! -e '${go}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done`;

/** A repository-like tree `<root>/projects/repo/src/main.ts`, and links to it from another folder. */
function layout() {
  const root = fs.realpathSync(tempDir());
  const repo = path.join(root, "projects", "repo");
  fs.mkdirSync(path.join(repo, "src"), { recursive: true });
  fs.mkdirSync(path.join(repo, "docs"));
  fs.writeFileSync(path.join(repo, "src", "main.ts"), "");
  const elsewhere = path.join(root, "elsewhere");
  fs.mkdirSync(elsewhere);
  fs.symlinkSync(repo, path.join(elsewhere, "repo-link"));
  fs.symlinkSync(path.join(root, "projects"), path.join(elsewhere, "projects-link"));
  fs.symlinkSync(path.join(repo, "src"), path.join(elsewhere, "src-link"));
  return { root, repo, elsewhere, go: path.join(root, "go") };
}

describe("--owns through symbolic links", () => {
  it("refuses a dispatch whose --cwd or --owns reaches a live dispatch's folder through a link, naming both paths", {
    timeout: 120_000,
  }, async () => {
    const { env } = isolatedHome();
    const { repo, elsewhere, go } = layout();
    const owner = await dispatchSh(env, ["--cwd", repo, "--owns", "src/", "--name", "owner"], waitForGo(go));
    expect(owner.code, owner.stderr).toBe(0);
    const theirs = `${path.join(repo, "src")}/`;

    const attempts: { title: string; cwd: string; owns: string; given: string; resolved: string }[] = [
      {
        title: "--cwd a link to the repository",
        cwd: path.join(elsewhere, "repo-link"),
        owns: "src/",
        given: path.join(elsewhere, "repo-link", "src/"),
        resolved: theirs,
      },
      {
        title: "--owns a link to the folder",
        cwd: elsewhere,
        owns: "src-link/",
        given: path.join(elsewhere, "src-link/"),
        resolved: theirs,
      },
      {
        title: "--cwd through a link to a folder above the repository, a file under the owned folder",
        cwd: path.join(elsewhere, "projects-link", "repo"),
        owns: "src/main.ts",
        given: path.join(elsewhere, "projects-link", "repo", "src", "main.ts"),
        resolved: path.join(repo, "src", "main.ts"),
      },
      {
        title: "--owns a path not there yet, below the link",
        cwd: path.join(elsewhere, "repo-link"),
        owns: "src/new/deeper.ts",
        given: path.join(elsewhere, "repo-link", "src", "new", "deeper.ts"),
        resolved: path.join(repo, "src", "new", "deeper.ts"),
      },
    ];
    for (const a of attempts) {
      const refused = await dispatchSh(env, ["--cwd", a.cwd, "--owns", a.owns, "--name", "intruder"], "true");
      expect(refused.code, a.title).toBe(1);
      const words = errorOf(refused);
      expect(words.startsWith("E_ADMIT_OVERLAP: "), words).toBe(true);
      expect(words, a.title).toContain(
        `--owns ${a.given} (${a.resolved} once its links are followed) overlaps ${theirs}, owned by live dispatch owner (`,
      );
    }

    // A path through the link that overlaps nothing is admitted; admit.json keeps what was given and what
    // the file system resolved.
    const beside = await dispatchSh(
      env,
      ["--cwd", path.join(elsewhere, "repo-link"), "--owns", "docs/", "--name", "beside"],
      "true",
    );
    expect(beside.code, beside.stderr).toBe(0);
    const besideDir = dispatchedOf(beside).dir;
    expect(readJson(path.join(besideDir, "admit.json"))).toMatchObject({
      cwd: path.join(elsewhere, "repo-link"),
      owns: ["docs/"],
      resolved: { cwd: repo, owns: [`${path.join(repo, "docs")}/`] },
    });

    fs.writeFileSync(go, "");
    await waitForFile(path.join(dispatchedOf(owner).dir, "record.json"), 30_000);
    await waitForFile(path.join(besideDir, "record.json"), 30_000);
  });
});
